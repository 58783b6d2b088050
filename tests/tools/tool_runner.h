/* Running the osdfs tool from tests: exit status and captured output. */
#ifndef TOOL_RUNNER_H
#define TOOL_RUNNER_H

#include <stddef.h>

struct run_result {
	int status;   /* exit code, or 128 + signal */
	char *out;    /* stdout, NUL terminated */
	char *err;    /* stderr, NUL terminated */
	size_t out_len;
};

/*
 * Runs the tool (OSDFS_TOOL_PATH) with "--target DIR" first when @p target is
 * not NULL, then the NULL-terminated arguments. Returns the exit code; @p r
 * (may be NULL) receives the output, freed with run_free().
 */
int run_tool(struct run_result *r, const char *target, ...) __attribute__((sentinel));
int run_toolv(struct run_result *r, const char *target, char *const *args);
/* Runs program @p prog with the NULL-terminated arguments (as run_tool()). */
int run_prog(struct run_result *r, const char *prog, ...) __attribute__((sentinel));
int run_progv(struct run_result *r, const char *prog, char *const *args);
void run_free(struct run_result *r);

/* A fresh directory under $TMPDIR (or /tmp); returns a malloc'd path. */
char *run_mkdtemp(const char *tag);
/* rm -rf */
void run_rmtree(const char *path);

#endif
