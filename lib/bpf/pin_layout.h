/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The version of the pinned maps' layout, kept in a pinned map of its own
 * (tls_layout: an array of one __u32, a format that never changes), so that
 * a tlsd can tell pins it may take over, pins of an older tlsd to put back
 * and replace, and pins of a newer tlsd that it must not touch. Pins made
 * before the map existed (tlsd 0.1) are layout 1.
 */
#ifndef TLS_PIN_LAYOUT_H
#define TLS_PIN_LAYOUT_H

#include <stddef.h>
#include <linux/types.h>

/* Raised when a pinned map changes size or meaning, or is no longer
 * pinned. 3: tls_saved_qdisc and tls_job_names, the daemon's own state,
 * moved to its state file (tcd/state_file.h); tlsd reads them from pins of
 * layouts 1 and 2 into that file before it takes those over
 * (legacy_state.h). */
#define TLS_PIN_LAYOUT 3
/* The oldest layout whose maps this tlsd takes over as they are (when
 * their sizes match too: tls_cls_check_pinned); maps it pinned that this
 * one does not are not judged. */
#define TLS_PIN_LAYOUT_COMPAT 1
/* Pins without tls_layout. */
#define TLS_PIN_LAYOUT_UNVERSIONED 1

enum tls_layout_verdict {
	TLS_LAYOUT_NONE,  /* nothing pinned */
	TLS_LAYOUT_OURS,  /* taken over as it is (then marked this layout) */
	TLS_LAYOUT_OLDER, /* put back as that tlsd would, then replaced */
	TLS_LAYOUT_NEWER, /* a newer tlsd's: left untouched, start refused */
};

/* The layout of the pins in pin_dir: 0 and *layout (0: nothing pinned;
 * TLS_PIN_LAYOUT_UNVERSIONED: pins without tls_layout), or -errno; a
 * tls_layout of another format reads as UINT32_MAX (newer than any). */
int tls_pin_layout_read(const char *pin_dir, __u32 *layout);
/* What a tlsd of layout `ours` (taking over from `compat` on) does with
 * pins of `pinned`; in why, when not NONE or OURS, the two layouts. */
enum tls_layout_verdict tls_pin_layout_judge(__u32 pinned, __u32 ours, __u32 compat, char *why,
					     size_t len);
/* Mark the pins as this tlsd's layout (fd: the tls_layout map). */
int tls_pin_layout_write(int fd);

#endif /* TLS_PIN_LAYOUT_H */
