/* fuzz_cdb.c — libFuzzer harness for the check of a compile_commands.json before libclang
 * reads it (analyzer/cdb_check.c, `lockstep lint -p DIR`). The input is the file's text. A
 * rejected file must be named at the start of every line of the message, each an error; an
 * accepted one must be what libclang's reader takes: a non-empty array of objects with string
 * directory and file and a command string or an arguments array of strings. */
#include "fuzz_common.h"

#include <cjson/cJSON.h>

#include "cdb_flags.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fz_init_io();
  return 0;
}

static int nonempty_string(const cJSON *v) { return cJSON_IsString(v) && *v->valuestring; }

static int libclang_shape(const cJSON *root) {
  if (!cJSON_IsArray(root) || !root->child)
    return 0;
  for (const cJSON *e = root->child; e; e = e->next) {
    if (!cJSON_IsObject(e) || !nonempty_string(cJSON_GetObjectItemCaseSensitive(e, "directory")) ||
        !nonempty_string(cJSON_GetObjectItemCaseSensitive(e, "file")))
      return 0;
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(e, "command");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "arguments");
    if ((!cmd && !args) || (cmd && !nonempty_string(cmd)) || (args && (!cJSON_IsArray(args) || !args->child)))
      return 0;
    for (const cJSON *a = args ? args->child : NULL; a; a = a->next)
      if (!cJSON_IsString(a))
        return 0;
    for (const cJSON *m = e->child; m; m = m->next)
      if (strcmp(m->string, "directory") && strcmp(m->string, "file") && strcmp(m->string, "command") &&
          strcmp(m->string, "arguments") && strcmp(m->string, "output"))
        return 0;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fz_file f;
  fz_file_open(&f, data, size);
  fz_capture_begin();
  int rc = ls_cdb_validate(f.path);
  const char *msg = fz_capture_end();
  size_t n = strlen(f.path);
  if (rc != 0) {
    if (!*msg)
      fz_contract("a rejected database has no message", msg);
    for (const char *l = msg; *l; l = strchr(l, '\n') + 1) {
      if (strncmp(l, f.path, n) != 0 || l[n] != ':')
        fz_contract("a line of a rejection does not start with the database's name", msg);
      const char *e = strchr(l, '\n');
      const char *err = strstr(l, ": error: ");
      if (!e || !err || err > e)
        fz_contract("a line of a rejection is not an error", msg);
    }
  } else {
    if (*msg)
      fz_contract("an accepted database printed something", msg);
    char *text = malloc(size + 1);
    if (!text)
      abort();
    memcpy(text, data, size);
    text[size] = 0;
    const char *body = size >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? text + 3 : text;
    cJSON *root = strlen(text) == size ? cJSON_ParseWithOpts(body, NULL, 1) : NULL;
    if (!libclang_shape(root))
      fz_contract("an accepted database is not a non-empty array of well-formed entries", text);
    cJSON_Delete(root);
    free(text);
  }
  fz_file_close(&f);
  return 0;
}
