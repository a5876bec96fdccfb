/* SPDX-License-Identifier: BSD-3-Clause */
/* error.c: return codes, their descriptions, and message formatting. */
#include <stdio.h>

#include "base.h"

const char *cc_strerror(int code)
{
    switch (code) {
    case CC_OK: return "success";
#define CC_ERROR_TEXT(name, value, message)                                    \
    case CC_##name: return message;
        CC_ERROR_MAP(CC_ERROR_TEXT)
#undef CC_ERROR_TEXT
    }
    return "unknown error code";
}

const char *cc_error_name(int code)
{
    switch (code) {
    case CC_OK: return "CC_OK";
#define CC_ERROR_NAME(name, value, message)                                    \
    case CC_##name: return "CC_" #name;
        CC_ERROR_MAP(CC_ERROR_NAME)
#undef CC_ERROR_NAME
    }
    return "CC_UNKNOWN";
}

int cc__message(char *message, int code, const char *format, ...)
{
    if (message != NULL) {
        va_list args;
        va_start(args, format);
        vsnprintf(message, CC_MESSAGE_SIZE, format, args);
        va_end(args);
    }
    return code;
}
