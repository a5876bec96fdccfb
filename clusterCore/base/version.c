/* SPDX-License-Identifier: BSD-3-Clause */
/* version.c: the library's version, as configure gives it. */
#include "base.h"

const char *cc_version(void)
{
    return PACKAGE_VERSION;
}
