/* export_flamegraph.c - a self-contained interactive flame graph (SVG,
 * no external resources): one box per stack node, callers below their
 * callees as flamegraph.pl draws them, threads merged.  Its script shows
 * a hovered frame's function, file:line, samples and share in a details
 * line, zooms to a clicked frame (the frames below it stay, full width),
 * and highlights the frames a search box matches. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export.h"

#include <stdlib.h>
#include <string.h>

#include "export_stacks.h"

#define WIDTH 1200.0
#define PAD 10.0
#define FRAME_H 16.0
#define TOP 60.0    /* title, search box */
#define BOTTOM 34.0 /* details line */
#define MIN_W 0.1   /* pixels: narrower frames are left out */
/* The recursion below goes one call per frame of a stack: a stack table
 * from a file anyone wrote could be far deeper than the 2048 frames a
 * sample carries, so deeper frames are left out. */
#define MAX_DEPTH 8192

/* The script: everything it needs is in the frames' attributes
 * (data-x, data-w: share of the whole; data-d: depth). */
static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var W = 1180, PAD = 10, frames, details, total;\n"
"function label(g) { return g.getAttribute('data-label'); }\n"
"function fit(g, w) {\n"
"  var t = g.querySelector('text'), s = label(g), n = Math.floor((w - 6) / 7);\n"
"  t.textContent = n < 3 ? '' : s.length <= n ? s : s.slice(0, n - 2) + '..';\n"
"}\n"
"function place(g, x, w, show) {\n"
"  var r = g.querySelector('rect');\n"
"  g.style.display = show ? '' : 'none';\n"
"  if (!show) return;\n"
"  r.setAttribute('x', PAD + x * W); r.setAttribute('width', Math.max(w * W - 0.5, 0.1));\n"
"  g.querySelector('text').setAttribute('x', PAD + x * W + 3);\n"
"  fit(g, w * W);\n"
"}\n"
"function zoom(g) {\n"
"  var x0 = +g.getAttribute('data-x'), w0 = +g.getAttribute('data-w'),\n"
"      d0 = +g.getAttribute('data-d');\n"
"  frames.forEach(function (f) {\n"
"    var x = +f.getAttribute('data-x'), w = +f.getAttribute('data-w'),\n"
"        d = +f.getAttribute('data-d');\n"
"    if (d < d0 && x <= x0 + 1e-12 && x + w >= x0 + w0 - 1e-12) place(f, 0, 1, true);\n"
"    else if (d >= d0 && x >= x0 - 1e-12 && x + w <= x0 + w0 + 1e-12)\n"
"      place(f, (x - x0) / w0, w / w0, true);\n"
"    else place(f, 0, 0, false);\n"
"  });\n"
"  document.getElementById('unzoom').style.opacity = d0 > 0 ? 1 : 0.3;\n"
"}\n"
"function search(term) {\n"
"  var hit = 0, seen = [];\n"
"  frames.forEach(function (f) {\n"
"    var m = term !== '' && label(f).indexOf(term) >= 0;\n"
"    f.classList.toggle('match', m);\n"
"    if (m && !seen.some(function (s) { return isIn(f, s); })) {\n"
"      seen.push(f); hit += +f.getAttribute('data-n');\n"
"    }\n"
"  });\n"
"  document.getElementById('matched').textContent =\n"
"    term === '' ? '' : 'Matched: ' + (100 * hit / total).toFixed(2) + '%';\n"
"}\n"
"function isIn(f, s) {\n"
"  var x = +f.getAttribute('data-x'), sx = +s.getAttribute('data-x');\n"
"  return x >= sx && x < sx + +s.getAttribute('data-w') &&\n"
"    +f.getAttribute('data-d') > +s.getAttribute('data-d');\n"
"}\n"
"function init() {\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  details = document.getElementById('details');\n"
"  total = +document.documentElement.getAttribute('data-total');\n"
"  frames.forEach(function (g) {\n"
"    g.addEventListener('mouseover', function () {\n"
"      details.textContent = g.querySelector('title').textContent.replace('\\n', ': ');\n"
"    });\n"
"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"    g.addEventListener('click', function () { zoom(g); });\n"
"  });\n"
"  document.getElementById('unzoom').addEventListener('click', function () {\n"
"    zoom(frames[0]);\n"
"  });\n"
"  var box = document.getElementById('search');\n"
"  if (box) box.addEventListener('input', function () { search(box.value); });\n"
"  zoom(frames[0]); /* fits the labels to their frames */\n"
"  document.documentElement.setAttribute('data-pytop-ready', '1');\n"
"}\n"
"window.addEventListener('load', init);\n"
"]]></script>\n";

/* XML text: the five specials as entities; bytes XML 1.0 cannot carry
 * (control characters, and invalid UTF-8 from a file anyone wrote) as
 * the \xNN the names already use. */
static int put_xml(FILE *out, const char *text)
{
	const unsigned char *p = (const unsigned char *)text;

	while (*p) {
		int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
		        : (*p & 0xf8) == 0xf0 ? 4 : 0;
		int ok = n > 0 && !(*p >= 0xc0 && *p < 0xc2) && *p < 0xf5;
		int rc;

		for (int k = 1; ok && k < n; k++)
			ok = (p[k] & 0xc0) == 0x80;
		if (!ok || (*p < 0x20 && *p != '\t') || *p == 0x7f)
			rc = fprintf(out, "\\x%02x", *p), n = 1;
		else if (*p == '&')
			rc = fputs("&amp;", out);
		else if (*p == '<')
			rc = fputs("&lt;", out);
		else if (*p == '>')
			rc = fputs("&gt;", out);
		else if (*p == '"')
			rc = fputs("&quot;", out);
		else
			rc = fwrite(p, 1, (size_t)n, out) == (size_t)n ? 0 : -1;
		if (rc < 0)
			return -1;
		p += n;
	}
	return 0;
}

/* Children lists from the parent links: the children of node n are
 * kids[first[n] .. first[n + 1]). */
struct tree {
	const struct snapshot *s;
	uint64_t *own, *total;
	uint32_t *first, *kids;
	uint64_t all;
	double height;
};

static const struct snapshot *sort_snap; /* qsort has no context */

static int by_label(const void *a, const void *b)
{
	const struct snap_frame *x = &sort_snap->stack_frames[
		sort_snap->stack_nodes[*(const uint32_t *)a].frame];
	const struct snap_frame *y = &sort_snap->stack_frames[
		sort_snap->stack_nodes[*(const uint32_t *)b].frame];
	int c = strcmp(x->name ? x->name : "", y->name ? y->name : "");

	return c != 0 ? c : (x->line > y->line) - (x->line < y->line);
}

static int tree_build(struct tree *t, const struct snapshot *s)
{
	size_t n = s->nstack_nodes ? s->nstack_nodes : 1;
	uint32_t *fill;
	bool *ok;

	memset(t, 0, sizeof *t);
	t->s = s;
	t->own = export_node_samples(s);
	t->total = calloc(n, sizeof *t->total);
	t->first = calloc(n + 1, sizeof *t->first);
	t->kids = calloc(n, sizeof *t->kids);
	fill = calloc(n + 1, sizeof *fill);
	ok = export_nodes_ok(s);
	if (!t->own || !t->total || !t->first || !t->kids || !fill || !ok) {
		free(fill);
		free(ok);
		return -1;
	}
	/* Parents come before children: totals in one backward pass. */
	for (size_t i = s->nstack_nodes; i-- > 1;)
		if (ok[i]) {
			t->total[i] += t->own[i];
			t->total[s->stack_nodes[i].parent] += t->total[i];
			t->first[s->stack_nodes[i].parent + 1]++;
		}
	t->all = t->total[0];
	for (size_t i = 1; i <= n; i++)
		t->first[i] += t->first[i - 1];
	for (size_t i = 1; i < s->nstack_nodes; i++)
		if (ok[i]) {
			uint32_t p = s->stack_nodes[i].parent;

			t->kids[t->first[p] + fill[p]++] = (uint32_t)i;
		}
	free(fill);
	free(ok);
	sort_snap = s;
	for (size_t i = 0; i < s->nstack_nodes; i++)
		qsort(t->kids + t->first[i], t->first[i + 1] - t->first[i],
		      sizeof *t->kids, by_label);
	return 0;
}

static void tree_free(struct tree *t)
{
	free(t->own);
	free(t->total);
	free(t->first);
	free(t->kids);
}

/* A colour from the function's name, warm for Python, cool for native,
 * grey for the folded stacks: the same function, the same colour. */
static void colour(const struct snap_frame *f, char *buf, size_t len)
{
	unsigned h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)(f->name ? f->name : ""); *p; p++)
		h = (h ^ *p) * 16777619u;
	if (f->other)
		snprintf(buf, len, "rgb(180,180,180)");
	else if (f->native)
		snprintf(buf, len, "rgb(%u,%u,230)", 80 + h % 60, 150 + (h >> 8) % 80);
	else
		snprintf(buf, len, "rgb(230,%u,%u)", 90 + h % 140, 40 + (h >> 8) % 50);
}

static int put_frame(FILE *out, const struct tree *t, uint32_t n, double x,
                     int depth)
{
	const struct snap_frame *f = n == 0 ? NULL
	                             : &t->s->stack_frames[t->s->stack_nodes[n].frame];
	double w = t->all ? (double)t->total[n] / (double)t->all : 0;
	double y = t->height - BOTTOM - FRAME_H * (depth + 1);
	char fill[32];

	if (f != NULL)
		colour(f, fill, sizeof fill);
	else
		snprintf(fill, sizeof fill, "rgb(200,200,200)");
	if (fprintf(out, "<g class=\"f\" data-x=\"%.12g\" data-w=\"%.12g\" data-d=\"%d\" "
	            "data-n=\"%llu\" data-label=\"", x, w, depth,
	            (unsigned long long)t->total[n]) < 0)
		return -1;
	if ((f != NULL ? export_put_label(out, f, put_xml) : fputs("all", out)) < 0 ||
	    fputs("\"><title>", out) < 0 ||
	    (f != NULL ? export_put_label(out, f, put_xml) : fputs("all", out)) < 0)
		return -1;
	return fprintf(out, "\n%llu samples (%.2f%%)</title><rect x=\"%.2f\" y=\"%.1f\" "
	               "width=\"%.2f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/>"
	               "<text x=\"%.2f\" y=\"%.1f\"></text></g>\n",
	               (unsigned long long)t->total[n], 100.0 * w, PAD + x * (WIDTH - 2 * PAD),
	               y, w * (WIDTH - 2 * PAD) - 0.5 > 0.1 ? w * (WIDTH - 2 * PAD) - 0.5 : 0.1,
	               FRAME_H - 1, fill, PAD + x * (WIDTH - 2 * PAD) + 3, y + 11.5) < 0 ? -1 : 0;
}

/* Node n at x (share of the whole) and depth, then its children left to
 * right; recursion as deep as the deepest stack, at most MAX_DEPTH. */
static int put_subtree(FILE *out, const struct tree *t, uint32_t n, double x,
                       int depth)
{
	if (t->all == 0 || depth > MAX_DEPTH || (double)t->total[n] / (double)t->all * (WIDTH - 2 * PAD) < MIN_W)
		return 0;
	if (put_frame(out, t, n, x, depth) < 0)
		return -1;
	for (uint32_t k = t->first[n]; k < t->first[n + 1]; k++) {
		uint32_t c = t->kids[k];

		if (put_subtree(out, t, c, x, depth + 1) < 0)
			return -1;
		x += (double)t->total[c] / (double)t->all;
	}
	return 0;
}

static int put_head(FILE *out, const struct tree *t, const struct export_meta *m)
{
	if (fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
	            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
	            "data-total=\"%llu\">\n<style>\n"
	            "text { font: 12px monospace; fill: #000; pointer-events: none; }\n"
	            "g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
	            "g.f.match rect { fill: rgb(230,0,230); }\n"
	            "#title { font-size: 17px; }\n"
	            "</style>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
	            "<text id=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
	            WIDTH, t->height, WIDTH, t->height, (unsigned long long)t->all,
	            WIDTH / 2) < 0 ||
	    put_xml(out, m->command) < 0)
		return -1;
	return fprintf(out, "</text>\n<text id=\"unzoom\" x=\"%.0f\" y=\"48\" "
	               "style=\"opacity:0.3;cursor:pointer;pointer-events:all\">"
	               "Reset zoom</text>\n<text id=\"matched\" x=\"%.0f\" y=\"48\" "
	               "text-anchor=\"end\"></text>\n"
	               "<foreignObject x=\"%.0f\" y=\"32\" width=\"220\" height=\"22\">"
	               "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" "
	               "placeholder=\"Search\" style=\"width:200px;font:12px monospace\"/>"
	               "</foreignObject>\n"
	               "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n",
	               PAD, WIDTH - 240, WIDTH - 230, PAD, t->height - 12) < 0 ? -1 : 0;
}

int export_flamegraph(FILE *out, const struct snapshot *s,
                      const struct export_meta *m)
{
	struct tree t;
	size_t depth = export_max_depth(s);
	int rc = -1;

	if (tree_build(&t, s) == 0) {
		t.height = TOP + BOTTOM +
		           FRAME_H * (double)((depth < MAX_DEPTH ? depth : MAX_DEPTH) + 1);
		rc = put_head(out, &t, m) < 0 || fputs(script, out) < 0 ||
		     put_subtree(out, &t, 0, 0, 0) < 0 || fputs("</svg>\n", out) < 0 ? -1 : 0;
	}
	tree_free(&t);
	return rc;
}
