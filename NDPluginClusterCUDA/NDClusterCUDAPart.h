/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAPart.h: what the plugin's concerns share. Each concern
 * (the finder and its settings, the batch pipeline, the outputs, the
 * imaging, the corrections, PSI's modes) is a part: an object that creates
 * its own parameters, with their first values and the handlers of their
 * writes, keeps its own state, and does its share of a batch and of a
 * publication. NDPluginClusterCUDA holds the parts and wires them.
 */
#ifndef NDCLUSTERCUDAPART_H
#define NDCLUSTERCUDAPART_H

#include <functional>

#include <asynPortDriver.h>

#include "clustercore.h"

/* What the plugin tells the user (StatusMessage_RBV, NELM 1024): room
 * for the backend's fall-back and the three files loaded at start, each
 * path up to 256 characters. */
#define NDCC_MESSAGE_SIZE 1024

class NDPluginClusterCUDA;

/* The handler of a parameter's writes: it checks the value (refusing it
 * with the reason: NDClusterCUDAPart::refuse), may change it (a command's
 * 1 is stored as 0) and does what the write asks; asynSuccess stores it. */
typedef std::function<asynStatus(asynUser *, epicsInt32 &)> Int32Write;
typedef std::function<asynStatus(asynUser *, epicsFloat64 &)> Float64Write;

/* snprintf for messages to people, which may end cut short. */
void formatMessage(char *message, size_t size, const char *format, ...)
    EPICS_PRINTF_STYLE(3, 4);
/* Adds more (unless empty) to message, NDCC_MESSAGE_SIZE bytes, after a
 * "; " when message holds something already. */
void appendMessage(char *message, const char *more);

class NDClusterCUDAPart {
  protected:
    explicit NDClusterCUDAPart(NDPluginClusterCUDA &plugin) : plugin_(plugin)
    {
    }
    /* Creates a parameter of the plugin's with its first value and, for a
     * setting, the handler of its writes (none: every value is taken). */
    void int32Param(const char *name, int *index, epicsInt32 initial,
                    Int32Write write = nullptr);
    void float64Param(const char *name, int *index, epicsFloat64 initial,
                      Float64Write write = nullptr);
    void octetParam(const char *name, int *index, const char *initial);
    void arrayParam(const char *name, int *index);
    /* The plugin's parameters, as the port has them (port locked). */
    int getInt(int index);
    double getDouble(int index);
    void getString(int index, char *value, size_t size);
    /* StatusMessage_RBV (port locked). */
    void status(const char *format, ...) EPICS_PRINTF_STYLE(2, 3);
    /* Refuses a PV write: the setting keeps its value, StatusMessage and
     * the client's error say why (port locked). */
    asynStatus refuse(asynUser *pasynUser, const char *format, ...)
        EPICS_PRINTF_STYLE(3, 4);

    NDPluginClusterCUDA &plugin_;
};

#endif
