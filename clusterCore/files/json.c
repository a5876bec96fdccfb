/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c: a strict JSON reader (RFC 8259) for the detector's master files.
 * It builds a small tree; the master files are a few kilobytes, so
 * simplicity beats speed. Anything that is not exactly one JSON value,
 * such as a trailing comma or a second value, is refused with the line
 * where it went wrong, because a master file that parses "mostly" is the
 * kind of input that silently gives wrong frame sizes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { depth_max = 64 };

struct parser {
    const char *text, *end, *at;
    char *message;
};

static int fail(struct parser *parser, const char *what)
{
    int line = 1;
    for (const char *c = parser->text; c < parser->at; c++)
        line += *c == '\n';
    return cc__message(parser->message, CC_EFORMAT, "%s on line %d", what,
                       line);
}

static void skip_space(struct parser *parser)
{
    while (parser->at < parser->end &&
           (*parser->at == ' ' || *parser->at == '\t' || *parser->at == '\n' ||
            *parser->at == '\r'))
        parser->at++;
}

static bool take(struct parser *parser, char c)
{
    skip_space(parser);
    if (parser->at < parser->end && *parser->at == c) {
        parser->at++;
        return true;
    }
    return false;
}

static bool take_word(struct parser *parser, const char *word)
{
    size_t length = strlen(word);
    if ((size_t)(parser->end - parser->at) < length ||
        memcmp(parser->at, word, length) != 0)
        return false;
    parser->at += length;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the four hex digits after \u. */
static long read_hex4(struct parser *parser)
{
    if (parser->end - parser->at < 4)
        return -1;
    long value = 0;
    for (int i = 0; i < 4; i++) {
        int digit = hex_digit(parser->at[i]);
        if (digit < 0)
            return -1;
        value = value * 16 + digit;
    }
    parser->at += 4;
    return value;
}

static size_t put_utf8(char *out, unsigned long code)
{
    if (code < 0x80) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        return 2;
    }
    if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code >> 18));
    out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code & 0x3F));
    return 4;
}

/* Parses a string after its opening quote; the result is never longer
 * than its source, so one allocation of the source length suffices. */
static int parse_string(struct parser *parser, char **result)
{
    const char *close = parser->at;
    while (close < parser->end && *close != '"')
        close += *close == '\\' && close + 1 < parser->end ? 2 : 1;
    char *out = malloc((size_t)(close - parser->at) + 1);
    if (out == NULL)
        return cc__message(parser->message, CC_ENOMEM, "out of memory");
    size_t n = 0;
    for (;;) {
        if (parser->at >= parser->end) {
            free(out);
            return fail(parser, "unterminated string");
        }
        unsigned char c = (unsigned char)*parser->at++;
        if (c == '"')
            break;
        if (c < 0x20) {
            free(out);
            return fail(parser, "control character in a string");
        }
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        char escape = parser->at < parser->end ? *parser->at++ : '\0';
        const char *plain = strchr("\"\\/bfnrt", escape);
        if (escape != '\0' && plain != NULL) {
            out[n++] = "\"\\/\b\f\n\r\t"[plain - "\"\\/bfnrt"];
            continue;
        }
        long code = escape == 'u' ? read_hex4(parser) : -1;
        if (code >= 0xD800 && code < 0xDC00) { /* a surrogate pair */
            long low = take_word(parser, "\\u") ? read_hex4(parser) : -1;
            code = low >= 0xDC00 && low < 0xE000
                       ? 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                       : -1;
        } else if (code >= 0xDC00 && code < 0xE000) {
            code = -1;
        }
        if (code < 0) {
            free(out);
            return fail(parser, "bad escape in a string");
        }
        n += put_utf8(out + n, (unsigned long)code);
    }
    out[n] = '\0';
    *result = out;
    return CC_OK;
}

/* Checks the number grammar (strtod alone accepts more, such as hex). */
static int parse_number(struct parser *parser, double *number)
{
    const char *c = parser->at;
    if (c < parser->end && *c == '-')
        c++;
    if (c < parser->end && *c == '0')
        c++;
    else if (c < parser->end && *c >= '1' && *c <= '9')
        while (c < parser->end && *c >= '0' && *c <= '9')
            c++;
    else
        return fail(parser, "bad number");
    if (c < parser->end && *c == '.') {
        const char *digits = ++c;
        while (c < parser->end && *c >= '0' && *c <= '9')
            c++;
        if (c == digits)
            return fail(parser, "bad number");
    }
    if (c < parser->end && (*c == 'e' || *c == 'E')) {
        c++;
        if (c < parser->end && (*c == '+' || *c == '-'))
            c++;
        const char *digits = c;
        while (c < parser->end && *c >= '0' && *c <= '9')
            c++;
        if (c == digits)
            return fail(parser, "bad number");
    }
    char copy[64];
    size_t length = (size_t)(c - parser->at);
    if (length >= sizeof copy)
        return fail(parser, "number too long");
    memcpy(copy, parser->at, length);
    copy[length] = '\0';
    *number = strtod(copy, NULL);
    if (!isfinite(*number))
        return fail(parser, "number out of range");
    parser->at = c;
    return CC_OK;
}

static int parse_value(struct parser *parser, struct cc__json *value,
                       int depth);

/* Parses the elements of an array or the members of an object after the
 * opening bracket, up to the closing one. */
static int parse_children(struct parser *parser, struct cc__json *value,
                          int depth)
{
    bool object = value->type == CC__JSON_OBJECT;
    char close = object ? '}' : ']';
    size_t capacity = 0;
    if (take(parser, close))
        return CC_OK;
    do {
        struct cc__json *children =
            cc__grow(value->children, &capacity, value->n_children + 1,
                     sizeof *children);
        if (children == NULL)
            return cc__message(parser->message, CC_ENOMEM, "out of memory");
        value->children = children;
        struct cc__json *child = &children[value->n_children];
        *child = (struct cc__json){0};
        char *key = NULL;
        if (object) {
            if (!take(parser, '"'))
                return fail(parser, "expected a member name");
            int rc = parse_string(parser, &key);
            if (rc != CC_OK)
                return rc;
            if (!take(parser, ':')) {
                free(key);
                return fail(parser, "expected ':'");
            }
        }
        value->n_children++;
        int rc = parse_value(parser, child, depth + 1);
        child->key = key; /* NULL in arrays */
        if (rc != CC_OK)
            return rc;
    } while (take(parser, ','));
    return take(parser, close) ? CC_OK : fail(parser, "expected ',' or a close");
}

static int parse_value(struct parser *parser, struct cc__json *value,
                       int depth)
{
    if (depth > depth_max)
        return fail(parser, "nesting too deep");
    skip_space(parser);
    if (parser->at >= parser->end)
        return fail(parser, "unexpected end");
    char c = *parser->at;
    if (c == '{' || c == '[') {
        parser->at++;
        value->type = c == '{' ? CC__JSON_OBJECT : CC__JSON_ARRAY;
        return parse_children(parser, value, depth);
    }
    if (c == '"') {
        parser->at++;
        value->type = CC__JSON_STRING;
        return parse_string(parser, &value->string);
    }
    if (take_word(parser, "true"))
        value->type = CC__JSON_TRUE;
    else if (take_word(parser, "false"))
        value->type = CC__JSON_FALSE;
    else if (take_word(parser, "null"))
        value->type = CC__JSON_NULL;
    else {
        value->type = CC__JSON_NUMBER;
        return parse_number(parser, &value->number);
    }
    return CC_OK;
}

static void free_children(struct cc__json *value)
{
    for (size_t i = 0; i < value->n_children; i++)
        free_children(&value->children[i]);
    free(value->children);
    free(value->string);
    free(value->key);
}

void cc__json_free(struct cc__json *value)
{
    if (value == NULL)
        return;
    free_children(value);
    free(value);
}

int cc__json_parse(const char *text, size_t length, struct cc__json **root,
                   char *message)
{
    struct parser parser = {text, text + length, text, message};
    struct cc__json *value = calloc(1, sizeof *value);
    if (value == NULL)
        return cc__message(message, CC_ENOMEM, "out of memory");
    int rc = parse_value(&parser, value, 0);
    skip_space(&parser);
    if (rc == CC_OK && parser.at != parser.end)
        rc = fail(&parser, "unexpected characters after the value");
    if (rc != CC_OK) {
        cc__json_free(value);
        return rc;
    }
    *root = value;
    return CC_OK;
}

const struct cc__json *cc__json_member(const struct cc__json *object,
                                       const char *key)
{
    if (object == NULL || object->type != CC__JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < object->n_children; i++)
        if (strcmp(object->children[i].key, key) == 0)
            return &object->children[i];
    return NULL;
}
