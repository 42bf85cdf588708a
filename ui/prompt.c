/* prompt.c - line editing for the bottom-row prompt. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "prompt.h"

#include <stdio.h>
#include <string.h>

#include "text.h"

#define KEY_ESC 27
#define KEY_DEL 127

void prompt_open(struct prompt *p, const char *label, const char *initial)
{
	p->active = true;
	p->label = label;
	snprintf(p->text, sizeof p->text, "%s", initial != NULL ? initial : "");
}

/* Remove the last UTF-8 character. */
static void erase_last(struct prompt *p)
{
	size_t n = strlen(p->text);

	while (n > 0 && ((unsigned char)p->text[n - 1] & 0xc0) == 0x80)
		n--; /* continuation bytes */
	if (n > 0)
		n--;
	p->text[n] = '\0';
}

/* Append code point cp as UTF-8 if it fits. */
static void append(struct prompt *p, int cp)
{
	char u[4];
	size_t len, n = strlen(p->text);

	if (cp < 0x80) {
		u[0] = (char)cp;
		len = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		len = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		len = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		len = 4;
	}
	if (n + len < sizeof p->text) {
		memcpy(p->text + n, u, len);
		p->text[n + len] = '\0';
	}
}

enum prompt_result prompt_key(struct prompt *p, int key)
{
	if (key == '\r' || key == '\n' || key == CRT_KEYCODE(KEY_ENTER)) {
		p->active = false;
		return PROMPT_ACCEPTED;
	}
	if (key == KEY_ESC) {
		p->active = false;
		return PROMPT_CANCELLED;
	}
	if (key == KEY_DEL || key == '\b' ||
	    key == CRT_KEYCODE(KEY_BACKSPACE))
		erase_last(p);
	else if (key == CRT_CTRL('u'))
		p->text[0] = '\0';
	else if (!CRT_IS_KEYCODE(key) && key >= 0x20 && key <= 0x10ffff &&
	         !(key >= 0x7f && key < 0xa0))
		append(p, key);
	return PROMPT_EDITING;
}

void prompt_draw(const struct prompt *p, const struct crt *crt, int y)
{
	static const char hint[] = "   Enter:apply  Esc:cancel  empty:clear";
	char label[64], text[PROMPT_MAX * 2];
	int label_w, room, x;

	crt_fill(crt, y, 0, CRT_NORMAL);
	snprintf(label, sizeof label, "%s: ", p->label);
	crt_put(crt, y, 0, CRT_PROMPT, label);
	label_w = text_width(label, crt->utf8);
	/* Keep the end of long input in view, with room for the cursor. */
	room = COLS - label_w - 1;
	x = label_w + text_fit(text, sizeof text, p->text, room > 0 ? room : 0,
	                       TEXT_CUT_LEFT, crt->utf8);
	crt_put(crt, y, label_w, CRT_NORMAL, text);
	crt_put(crt, y, x, CRT_SELECTED, " "); /* the cursor */
	crt_put(crt, y, x + 1, CRT_NORMAL, hint);
}
