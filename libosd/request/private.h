/*
 * Internal state of osd_dev and osd_req, shared by the files of the request
 * layer (dev.c, cred_cache.c, req_build.c, req_layout.c, req_exec.c,
 * req_result.c, sync_helpers.c).
 */
#ifndef OSD_REQUEST_PRIVATE_H
#define OSD_REQUEST_PRIVATE_H

#include <pthread.h>
#include <osd/request.h>
#include <osd/cdb.h>
#include "lru/lru.h"
#include "request/arena.h"

#define OSD__ERR_LEN 512
#define OSD__TOKEN_MAX 64

/* A capability key's HMAC context, shared by the cache and the requests
 * signed with it; freed when the last holder lets go (under dev->lock, which
 * also serialises its use since an osd_key is single-threaded). */
struct osd__keyref {
	osd_key *key;
	unsigned refs;
	/* CAPKEY request ICV = HMAC(key, token) for the token it was computed
	 * with: the same for every request until the token changes (an iSCSI
	 * reconnect), so computed once instead of per request. A new credential
	 * gets a new keyref, hence a cold cache. */
	int capkey_icv_valid;
	uint8_t capkey_icv[OSD_HMAC_LEN];
	uint8_t capkey_token[OSD__TOKEN_MAX];
	size_t capkey_token_len;
};

/* One cached credential with its HMAC context. */
struct osd__cred_entry {
	struct osd__lru_node node;  /* in the cache, by obj */
	struct osd_obj_id obj;
	struct osd_credential cred;
	struct osd__keyref *key;
};

struct osd__cred_cache {
	struct osd__lru lru;    /* made on the first credential; least recently used first */
	unsigned max;           /* 0 = unbounded */
	int have_default;
	struct osd_credential dflt;
	struct osd__keyref *dflt_key;
};

struct osd_dev {
	struct osd_transport tp;
	struct osd_dev_options opts;
	enum osd_version version;
	pthread_mutex_t lock;   /* in-flight count, cache, error text */
	pthread_cond_t cond;    /* signalled on every completion */
	unsigned inflight;
	int polling;            /* a waiter is in poll() on the transport's fd */
	char err[OSD__ERR_LEN];
	char version_note[200]; /* why auto mode speaks another version than INQUIRY said */
	uint8_t system_id[OSD_SYSTEM_ID_LEN];
	int have_system_id;
	int64_t clock_offset;   /* OSD clock - osd_now_ms(), learned by the probe */
	uint8_t token[OSD__TOKEN_MAX];
	size_t token_len;
	int answered;           /* the target has answered a command of this device */
	uint64_t resets;        /* 29h/00h-04h after that (osd_dev_reset_count()) */
	struct osd__cred_cache cache;
	struct osd_keyring *keyring; /* osd_dev_open_keyed(): owned, freed on close */
};

enum osd__req_state { OSD__REQ_BUILDING, OSD__REQ_INFLIGHT, OSD__REQ_DONE };

/* Attribute to get or set, value copied into the arena. */
struct osd__attr_vec {
	struct osd_attr *v;
	unsigned n, cap;
};

struct osd_req {
	osd_dev *dev;
	struct osd_cdb cdb;
	uint8_t cdb_buf[OSD_CDB_MAX_LEN];
	int is_collection;          /* the addressed object is a collection */
	unsigned flags;             /* OSD_REQ_* */
	const struct osd__cmd_desc *desc; /* the action's descriptor (proto/command.h) */
	uint16_t perms;             /* the descriptor's permissions */
	struct osd_obj_id cap_obj;  /* the object the capability must describe */
	int cap_is_collection;

	/* Command data */
	const struct iovec *out_data; /* payload (arena copy of the caller's iovecs) */
	int out_data_cnt;
	uint64_t out_data_len;
	const struct iovec *in_data;  /* data-in buffers for the command's data */
	int in_data_cnt;
	uint64_t in_data_len;
	uint8_t *in_buf;              /* arena buffer when the request owns data-in */
	uint8_t *cont;                /* v2 CDB continuation segment */
	size_t cont_len;

	/* Piggy-backed attributes */
	struct osd__attr_vec gets, sets;
	int page_mode;
	uint32_t get_page, get_page_alloc;
	uint32_t get_alloc;           /* override of the retrieved list allocation */
	unsigned auto_gets;           /* current-command attributes added for results */
	uint32_t cc_auto, cc_user;    /* current-command numbers we / the caller asked for */

	/* Credential */
	int has_cred;
	struct osd_credential cred;

	/* The exchange, built at submit */
	struct osd_xfer xfer;
	struct iovec *out_iov, *in_iov;
	uint8_t *set_list, *get_list, *attr_in, *icv_out, *icv_in;
	size_t set_list_len, get_list_len, attr_in_len, icv_in_len, icv_out_len;
	uint64_t attr_in_off, icv_in_off;
	struct osd__keyref *key;      /* reference held while the request lives */

	/* State and completion */
	enum osd__req_state state;
	int detached;
	int give_up;                  /* the caller stopped waiting: -ETIMEDOUT or
				       * -ECANCELED, the result it completes with */
	int completing;               /* xfer_done() is taking the answer in */
	int resent;                   /* sent again once (stale nonce, new session) */
	unsigned ua_resends;          /* sent again after a UNIT ATTENTION on this
				       * session (bounded) */
	uint8_t ua_token[OSD__TOKEN_MAX]; /* the channel token of the last one */
	size_t ua_token_len;
	uint8_t signed_token[OSD__TOKEN_MAX]; /* CAPKEY: the channel token signed for */
	size_t signed_token_len;
	osd_req_cb cb;
	void *cb_data;

	/* Results */
	int result;
	int has_sense;
	struct osd_sense sense;
	char *errmsg;
	uint64_t bytes_read;
	int is_short;
	struct osd_attr_reader rd;
	int rd_state;                 /* 0 not started, 1 ready, <0 error */
	int bad_answer;               /* the answer failed its checks (-EBADMSG,
				       * -EPROTO): none of it is handed out */

	/* Last: osd__req_new() zeroes everything before it, not its inline
	 * storage (every arena allocation is zeroed when handed out). */
	struct osd__arena arena;
};

/* dev.c */
void osd__dev_set_error(osd_dev *dev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void osd__dev_copy_req_error(osd_dev *dev, const osd_req *req);
/* The OSD clock in ms (for nonces). */
uint64_t osd__dev_clock(const osd_dev *dev);

/* req_build.c */
int osd__req_new(osd_req **out, osd_dev *dev, enum osd_action action,
		 const struct osd_obj_id *obj);
int osd__req_set_out_iov(osd_req *req, const struct iovec *iov, int iovcnt);
int osd__req_set_in_iov(osd_req *req, const struct iovec *iov, int iovcnt);
int osd__req_own_in_buf(osd_req *req, size_t len);

/* req_layout.c: lay out data-out/data-in, fill and encode the CDB. */
int osd__req_layout(osd_req *req);
/* ALLDATA: fill the data-out integrity block (after layout, with the key). */
int osd__req_sign_data_out(osd_req *req);
/* ALLDATA: check the data-in integrity block after completion. */
int osd__req_verify_data_in(osd_req *req);
/* CMDRSP/ALLDATA: check a response ICV (sense descriptor 07h or
 * current-command attribute 1); -EBADMSG on mismatch. Needs dev->lock. */
int osd__req_verify_response(osd_req *req, const uint8_t *sense, size_t sense_len,
			     const uint8_t *ricv, size_t ricv_len);

/* cred_cache.c */
void osd__cred_cache_init(struct osd__cred_cache *c);
void osd__cred_cache_destroy(struct osd__cred_cache *c);
/* Find or fetch the credential for req, put its capability into req->cdb.cap
 * and take a reference to its key in req->key (NULL for NOSEC). Called without dev->lock held. */
int osd__cred_prepare(osd_req *req);
/* Drop a key reference; takes dev->lock. */
void osd__keyref_release(osd_dev *dev, struct osd__keyref *k);
/* The same with dev->lock already held. */
void osd__keyref_put_locked(struct osd__keyref *k);
/* The CAPKEY request ICV of @p k for @p token, from its cache when computed
 * for the same token, else computed and remembered. Needs dev->lock. */
int osd__keyref_capkey_icv(struct osd__keyref *k, const uint8_t *token, size_t token_len,
			   const uint8_t **icv);

/* dev.c: the transport's cancel (struct osd_transport_ops), or -ENOTSUP
 * for a transport without one. */
int osd__dev_cancel(osd_dev *dev, struct osd_xfer *xfer);

/* req_exec.c */
int osd__req_submit(osd_req *req, osd_req_cb cb, void *data);
int osd__req_wait(osd_req *req, unsigned timeout_ms);
/* With dev->lock held: make progress for up to @p slice_ms (poll + service
 * the transport, or sleep on the completion condition). */
void osd__dev_wait_step(osd_dev *dev, unsigned slice_ms);
/* CLOCK_MONOTONIC in milliseconds (req_exec.c). */
uint64_t osd__mono_ms(void);
void osd__req_destroy(osd_req *req);
int osd__errmsg(osd_req *req, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* req_build.c: ask for current-command attribute @p number for our own use
 * (hidden from osd_req_next_attr() unless the caller asks for it too). */
int osd__req_add_cc_get(osd_req *req, uint32_t number);

/* req_result.c */
void osd__req_complete(osd_req *req, int err);

/* Re-read the transport's security token into dev->token (dev->lock held
 * or the device not yet shared). */
void osd__dev_refresh_token(osd_dev *dev);

#endif
