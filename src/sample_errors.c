/* sample_errors.c - the names of the sample error kinds (sample_errors.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sample_errors.h"

static const char *const names[SAMPLE_ERR_KINDS][2] = {
	[SAMPLE_ERR_NONE] = { "", "" },
	[SAMPLE_ERR_THREAD] = { "thread_state", "tstate" },
	[SAMPLE_ERR_STACK] = { "stack_memory", "stack" },
	[SAMPLE_ERR_FRAME] = { "torn_frame", "torn" },
	[SAMPLE_ERR_DEEP] = { "too_deep", "deep" },
	[SAMPLE_ERR_CODE] = { "code_object", "code" },
	[SAMPLE_ERR_STRING] = { "string", "string" },
	[SAMPLE_ERR_CODE_CHANGED] = { "code_changed", "changed" },
};

const char *sample_error_name(enum sample_error k)
{
	return (unsigned)k < SAMPLE_ERR_KINDS ? names[k][0] : "";
}

const char *sample_error_word(enum sample_error k)
{
	return (unsigned)k < SAMPLE_ERR_KINDS ? names[k][1] : "";
}
