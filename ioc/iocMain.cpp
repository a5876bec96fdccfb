/* SPDX-License-Identifier: BSD-3-Clause */
/* iocMain.cpp: the example IOCs (iocClusterCUDA, iocMoench): each runs the
 * st.cmd it is given, then the IOC shell. */
#include "epicsExit.h"
#include "epicsThread.h"
#include "iocsh.h"

int main(int argc, char *argv[])
{
    if (argc >= 2) {
        iocsh(argv[1]);
        epicsThreadSleep(.2);
    }
    iocsh(NULL);
    epicsExit(0);
    return 0;
}
