/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jvm_wire.h - the stream between memtop's JVMTI agent (src/jvmti/, loaded
 * into a JVM) and memtop (src/probe/jvm_source.c), over a Unix stream
 * socket the agent listens on (docs/java.md).
 *
 * Every message is a struct mt_jw_hdr followed by len bytes. Native byte
 * order (both ends run on the same machine). memtop opens with
 * MT_JW_START; the agent answers MT_JW_HELLO, then streams METHOD, SAMPLE,
 * FREE and STATS messages until memtop closes the connection, which ends
 * the session: the agent switches its events off and restores the JVM's
 * sampling interval. The events go on at memtop's MT_JW_GO, sent once its
 * loop reads the stream (so what the JVM samples while memtop still sets
 * up is not dropped in a full queue). memtop treats every byte as
 * untrusted.
 */
#ifndef MEMTOP_JVM_WIRE_H
#define MEMTOP_JVM_WIRE_H

#include <stdint.h>

#define MT_JW_MAGIC 0x4d544a56u /* "MTJV" */
#define MT_JW_VERSION 2
/* The agent keeps a JVM's samples under MT_JW_SAMPLES_PER_S_MAX a second:
 * past it, it widens the sampling interval (each sample carries the one
 * it was drawn with), at most to MT_JW_INTERVAL_MAX_FACTOR times memtop's,
 * and narrows it back once they are fewer than an eighth of that. */
#define MT_JW_SAMPLES_PER_S_MAX 8000
#define MT_JW_INTERVAL_MAX_FACTOR 256
/* Java frames per sample; deeper stacks are cut (flag MT_JWS_TRUNCATED). */
#define MT_JW_MAX_FRAMES 64
/* Bytes of a method's name ("package.Class.method") or source file. */
#define MT_JW_NAME_MAX 400
/* The largest message either side sends. */
#define MT_JW_MSG_MAX 8192
/* Tags per FREE message. */
#define MT_JW_FREE_BATCH 256
/* The agent's socket in the JVM's /tmp: this prefix, then the JVM's own
 * pid (as it sees it). */
#define MT_JW_SOCKET_PREFIX "/tmp/.memtop-jvmti-"

enum mt_jw_type {
	MT_JW_START = 1,  /* memtop -> agent: struct mt_jw_start */
	MT_JW_HELLO = 2,  /* agent -> memtop: struct mt_jw_hello */
	MT_JW_METHOD = 3, /* struct mt_jw_method, then name, then file */
	MT_JW_SAMPLE = 4, /* struct mt_jw_sample, then nframes mt_jw_frame */
	MT_JW_FREE = 5,   /* struct mt_jw_free, then n uint64_t tags */
	MT_JW_STATS = 6,  /* struct mt_jw_stats */
	MT_JW_GO = 7,     /* memtop -> agent, no payload: switch the events on */
};

struct mt_jw_hdr {
	uint32_t type; /* enum mt_jw_type */
	uint32_t len;  /* bytes after this header, at most MT_JW_MSG_MAX */
};

struct mt_jw_start {
	uint32_t magic;    /* MT_JW_MAGIC */
	uint32_t version;  /* MT_JW_VERSION */
	uint64_t interval; /* SetHeapSamplingInterval, bytes (> 0) */
};

struct mt_jw_hello {
	uint32_t magic;    /* MT_JW_MAGIC */
	uint32_t version;  /* MT_JW_VERSION */
	uint32_t sessions; /* sessions this agent served before this one */
	uint32_t jvmti_version;
};

/* A method, named once per session before the first sample using it. */
struct mt_jw_method {
	uint32_t id;       /* the agent's number for it: < MT_JW_MAX_METHODS */
	uint16_t name_len; /* bytes of name, 1..MT_JW_NAME_MAX */
	uint16_t file_len; /* bytes of file, 0..MT_JW_NAME_MAX */
};
#define MT_JW_MAX_METHODS (1u << 20)

enum mt_jw_sample_flags {
	MT_JWS_TRUNCATED = 1 << 0, /* the stack had more than MT_JW_MAX_FRAMES */
};

struct mt_jw_sample {
	uint64_t tag;  /* unique per object; its FREE names it (> 0) */
	uint64_t size; /* bytes of the object */
	uint32_t tid;  /* the allocating thread (Linux tid in the JVM's ns) */
	uint16_t nframes;
	uint16_t flags;    /* enum mt_jw_sample_flags */
	uint64_t interval; /* the sampling interval it was drawn with: from
			    * memtop's to MT_JW_INTERVAL_MAX_FACTOR times it */
};

struct mt_jw_frame {
	uint32_t method; /* an id a METHOD message named */
	int32_t line;    /* source line; <= 0 unknown */
};

struct mt_jw_free {
	uint32_t n; /* tags that follow, 1..MT_JW_FREE_BATCH */
	uint32_t _pad;
};

struct mt_jw_stats {
	uint64_t samples; /* samples taken this session */
	uint64_t dropped; /* samples and frees lost: the agent's queue was full */
	/* CPU time the session cost the JVM so far: its threads in the
	 * agent's callbacks, and the agent's own thread */
	uint64_t cost_ns;
	uint64_t interval; /* the sampling interval now */
};

#endif /* MEMTOP_JVM_WIRE_H */
