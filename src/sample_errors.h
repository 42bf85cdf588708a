/* sample_errors.h - why a thread's stack could not be taken at a tick: the
 * kinds the reader tells apart, the sampler counts (sampler_stats) and the
 * views name (the snapshot's errors_by_kind).  A common header because the
 * reader, the sampler and the snapshot all speak of them.
 *
 * Only a sample that was really torn or unreadable is an error: a name
 * that is merely strange (control characters, bytes that are not UTF-8, a
 * 10 000-character name) is shown escaped (cpython/py_name_text.h). */
#ifndef PYTOP_SAMPLE_ERRORS_H
#define PYTOP_SAMPLE_ERRORS_H

enum sample_error {
	SAMPLE_ERR_NONE = 0,
	SAMPLE_ERR_THREAD,       /* the thread state points nowhere */
	SAMPLE_ERR_STACK,        /* its data stack's memory could not be read */
	SAMPLE_ERR_FRAME,        /* torn frame chain: bad pointer or owner,
	                            a cycle, a frame that cannot be read */
	SAMPLE_ERR_DEEP,         /* a chain longer than the walker follows */
	SAMPLE_ERR_CODE,         /* a frame's code object unreadable, not a
	                            code object, or the offset outside it */
	SAMPLE_ERR_STRING,       /* a code's name or file name unreadable or
	                            not a str (not compact, absurd length) */
	SAMPLE_ERR_CODE_CHANGED, /* a code on the stack was freed and its
	                            address reused while the stack was read */
	SAMPLE_ERR_KINDS
};

/* The kind's JSON key ("torn_frame"); "" for SAMPLE_ERR_NONE and out of
 * range. */
const char *sample_error_name(enum sample_error k);
/* Its word in the header's error detail ("torn"), at most 7 columns. */
const char *sample_error_word(enum sample_error k);

#endif
