/* app.h - the views' entry points, called by main.c.
 *
 * Both loops poll the source every ~50 ms and take a snapshot every
 * o->delay_s seconds; they stop after o->iterations refreshes or
 * o->duration_s seconds (0 = no limit), on SIGINT/SIGTERM, or when the
 * target has exited. */
#ifndef PYTOP_UI_APP_H
#define PYTOP_UI_APP_H

#include <stdio.h>

#include "export_live.h"
#include "options.h"
#include "profile/snapshot.h"

/* Both loops write el's exports (export_live.h): a time-stamped one when
 * SIGUSR1 or the period asks (the TUI also on the e key), saying where on
 * stderr (the TUI: in its status line), and -o's file when they end. */

/* The live screen.  When the target exits, the final figures stay on
 * screen with "[target exited, status N]" until q.  Returns 0, -1 when
 * the terminal could not be set up (message printed), 1 when the final
 * export failed (said on stderr). */
int app_run_tui(const struct options *o, struct snapshot_source *src,
                struct export_live *el);

/* Text blocks (top -b style) or, with o->json, JSON Lines on out; a final
 * snapshot is printed when the run ends early (exit, signal, duration).
 * A time-stamped export asked for is written with the next block.
 * Returns 0, or -1 when out could not be written or the final export
 * failed. */
int app_run_batch(const struct options *o, struct snapshot_source *src,
                  FILE *out, struct export_live *el);

#endif
