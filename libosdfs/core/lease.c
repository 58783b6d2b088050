/*
 * The mount record's lease (docs/osdfs-format.md, 2.3): a read-write mount
 * writes a record naming itself (random id, host, pid) with a lease, and a
 * thread of the mount renews the lease every third of its length until
 * unmount. Another client judges the holder from the record: alive while
 * the lease runs, or gone once it ran out or, on the same host, once the
 * holder's process has ended. Mounts of this process are known exactly (a
 * registry of their ids), so a record of this pid whose handle was freed
 * without unmounting counts as dead.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "core/fs.h"

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *registry;
static size_t registry_n, registry_cap;

static int registry_add(uint64_t id)
{
	int rc = 0;

	pthread_mutex_lock(&registry_mu);
	if (registry_n == registry_cap) {
		size_t ncap = registry_cap ? 2 * registry_cap : 8;
		uint64_t *n = realloc(registry, ncap * sizeof(*n));

		if (n) {
			registry = n;
			registry_cap = ncap;
		} else {
			rc = -ENOMEM;
		}
	}
	if (rc == 0)
		registry[registry_n++] = id;
	pthread_mutex_unlock(&registry_mu);
	return rc;
}

static void registry_remove(uint64_t id)
{
	pthread_mutex_lock(&registry_mu);
	for (size_t i = 0; i < registry_n; i++) {
		if (registry[i] == id) {
			registry[i] = registry[--registry_n];
			break;
		}
	}
	pthread_mutex_unlock(&registry_mu);
}

static int registry_has(uint64_t id)
{
	int found = 0;

	pthread_mutex_lock(&registry_mu);
	for (size_t i = 0; i < registry_n && !found; i++)
		found = registry[i] == id;
	pthread_mutex_unlock(&registry_mu);
	return found;
}

static int64_t wall_now(void)
{
	struct osdfs__ts now;

	osdfs__now(&now);
	return now.sec;
}

/*
 * Seconds until a lease renewed at @p renewed (the holder's clock, read
 * from the medium) for @p lease seconds runs out at @p now: saturated at
 * +-INT64_MAX, so a damaged record's clock cannot overflow (nor can the
 * negation of the result when it is shown).
 */
static int64_t lease_left(int64_t renewed, uint32_t lease, int64_t now)
{
	int64_t end, left;

	if (__builtin_add_overflow(renewed, (int64_t)lease, &end))
		end = INT64_MAX;
	if (__builtin_sub_overflow(end, now, &left))
		left = end < 0 ? -INT64_MAX : INT64_MAX;
	return left < -INT64_MAX ? -INT64_MAX : left;
}

/* This process's pid namespace, as the inode number of /proc/self/ns/pid
 * (0 if unknown): a pid names the same process only within it. */
static uint32_t own_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (uint32_t)st.st_ino : 0;
}

/* Is process @p pid of this host (this pid namespace) still running? */
static int process_alive(uint32_t pid, uint64_t mount_id)
{
	if (pid == (uint32_t)getpid())
		return registry_has(mount_id);
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

void osdfs__holder_judge(const struct osdfs__mount_rec *m, int readable,
			 struct osdfs_holder *h)
{
	char me[65] = "";

	memset(h, 0, sizeof(*h));
	h->state = OSDFS_HOLDER_EXPIRED; /* an unreadable record: nothing to wait for */
	if (!readable)
		return;
	h->record_version = m->version;
	memcpy(h->host, m->host, sizeof(h->host));
	h->pid = m->pid;
	h->mount_id = m->mount_id;
	h->mount_time = m->time_sec;
	h->renewed = m->renewed_sec;
	h->lease_sec = m->lease_sec;
	if (m->lease_sec)
		h->expires_in = lease_left(m->renewed_sec, m->lease_sec, wall_now());
	/* a process of this host and pid namespace (or one not recorded): ask the kernel */
	if (gethostname(me, sizeof(me) - 1) == 0 && m->pid && strcmp(me, m->host) == 0 &&
	    (m->pidns == 0 || m->pidns == own_pidns())) {
		if (!process_alive(m->pid, m->mount_id)) {
			h->state = OSDFS_HOLDER_DEAD;
			return;
		}
		if (!m->lease_sec) { /* an older client that does not renew */
			h->state = OSDFS_HOLDER_LIVE;
			return;
		}
	}
	h->state = m->lease_sec && h->expires_in > 0 ? OSDFS_HOLDER_LIVE : OSDFS_HOLDER_EXPIRED;
}

int osdfs__holder_read(const struct osdfs_backend_ops *ops, void *impl, struct osdfs_holder *h)
{
	uint8_t buf[128];
	struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, buf, sizeof(buf) };
	struct osdfs__mount_rec m;
	int rc = ops->get_attrs(impl, OSDFS__SUPER_OID, &a, 1);

	if (rc == -ENOENT)
		return -EUCLEAN;
	if (rc < 0)
		return rc;
	if (a.len == 0) {
		memset(h, 0, sizeof(*h));
		h->state = OSDFS_HOLDER_NONE;
		return 0;
	}
	osdfs__holder_judge(&m, a.len <= sizeof(buf) && osdfs__mount_decode(&m, buf, a.len) == 0,
			    h);
	return 0;
}

int osdfs_holder_get(osdfs_backend *be, struct osdfs_holder *out)
{
	if (!be || !out)
		return -EINVAL;
	return osdfs__holder_read(osdfs_backend_ops_of(be), osdfs_backend_impl(be), out);
}

static const char *state_words(const struct osdfs_holder *h)
{
	switch (h->state) {
	case OSDFS_HOLDER_LIVE:
		return "it looks alive";
	case OSDFS_HOLDER_DEAD:
		return "that process no longer runs";
	case OSDFS_HOLDER_EXPIRED:
		return h->lease_sec ? "its lease ran out" : "the record has no lease";
	default:
		return "not mounted";
	}
}

char *osdfs_holder_format(const struct osdfs_holder *h, char *buf, size_t size)
{
	char since[32] = "?";
	time_t t = (time_t)h->mount_time;
	struct tm tm;
	int n;

	if (!buf || size == 0)
		return buf;
	if (h->state == OSDFS_HOLDER_NONE) {
		snprintf(buf, size, "not mounted");
		return buf;
	}
	if (h->record_version == 0) {
		snprintf(buf, size, "mounted (unreadable mount record)");
		return buf;
	}
	if (gmtime_r(&t, &tm))
		strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S UTC", &tm);
	n = snprintf(buf, size, "mounted by host '%s' pid %u (mount id %016llx) since %s",
		     h->host, h->pid, (unsigned long long)h->mount_id, since);
	if (n >= 0 && (size_t)n < size && h->lease_sec) {
		long long left = (long long)h->expires_in;

		if (left > 0)
			n += snprintf(buf + n, size - (size_t)n, "; lease of %u s runs out in %lld s",
				      h->lease_sec, left);
		else
			n += snprintf(buf + n, size - (size_t)n, "; lease of %u s ran out %lld s ago",
				      h->lease_sec, -left);
	}
	if (n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " (%s)", state_words(h));
	return buf;
}

static int record_write(osdfs *fs)
{
	uint8_t buf[OSDFS__MOUNT_LEN];
	struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, buf, sizeof(buf) };
	int rc;

	fs->lease.rec.renewed_sec = wall_now();
	osdfs__mount_encode(buf, &fs->lease.rec);
	rc = fs->ops->set_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1);
	if (rc == 0)
		rc = fs->ops->flush(fs->impl, OSDFS__SUPER_OID);
	return rc;
}

int osdfs__lease_write(osdfs *fs, const char *host, uint32_t lease_sec)
{
	struct osdfs__mount_rec *m = &fs->lease.rec;
	int rc;

	memset(m, 0, sizeof(*m));
	do {
		rc = (int)getrandom(&fs->mount_id, sizeof(fs->mount_id), 0);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	fs->mount_id |= 1; /* never 0 */
	m->version = 2;
	m->mount_id = fs->mount_id;
	m->time_sec = wall_now();
	m->pid = (uint32_t)getpid();
	m->pidns = own_pidns();
	m->lease_sec = lease_sec;
	if (host)
		snprintf(m->host, sizeof(m->host), "%s", host);
	else if (gethostname(m->host, sizeof(m->host) - 1) < 0)
		m->host[0] = '\0';
	rc = registry_add(fs->mount_id);
	if (rc == 0)
		rc = record_write(fs);
	return rc;
}

int osdfs__lease_owner(osdfs *fs)
{
	uint8_t buf[128];
	struct osdfs_attr a = { OSDFS__PAGE_SUPER, OSDFS__ATTR_MOUNT, buf, sizeof(buf) };
	struct osdfs__mount_rec m;

	if (fs->ops->get_attrs(fs->impl, OSDFS__SUPER_OID, &a, 1) < 0)
		return 1; /* cannot tell: keep the data */
	return a.len <= sizeof(buf) && osdfs__mount_decode(&m, buf, a.len) == 0 &&
	       m.mount_id == fs->mount_id;
}

/* One renewal; 0 to go on, 1 when taken over (stop). */
static int renew_once(osdfs *fs)
{
	if (osdfs__lease_owner(fs)) {
		record_write(fs); /* a failed write is retried at the next round */
		return 0;
	}
	pthread_rwlock_wrlock(&fs->lock);
	fs->readonly = 1;
	fs->taken_over = 1;
	pthread_rwlock_unlock(&fs->lock);
	osdfs__fail(fs, -ESTALE, "another mount took this filesystem over; now read-only");
	return 1;
}

static void *renew_thread(void *arg)
{
	osdfs *fs = arg;
	struct osdfs__lease *l = &fs->lease;
	struct timespec due;
	int done = 0;

	pthread_mutex_lock(&l->mu);
	while (!l->stop && !done) {
		clock_gettime(CLOCK_MONOTONIC, &due);
		due.tv_sec += l->rec.lease_sec / 3;
		while (!l->stop && pthread_cond_timedwait(&l->cv, &l->mu, &due) != ETIMEDOUT)
			;
		if (l->stop)
			break;
		pthread_mutex_unlock(&l->mu);
		done = renew_once(fs);
		pthread_mutex_lock(&l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int osdfs__lease_start(osdfs *fs)
{
	struct osdfs__lease *l = &fs->lease;
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	l->stop = 0;
	/* the application's signals go to its own threads, not to this one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&l->thread, NULL, renew_thread, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		return -rc;
	}
	l->running = 1;
	return 0;
}

void osdfs__lease_stop(osdfs *fs)
{
	struct osdfs__lease *l = &fs->lease;

	if (l->running) {
		pthread_mutex_lock(&l->mu);
		l->stop = 1;
		pthread_cond_signal(&l->cv);
		pthread_mutex_unlock(&l->mu);
		pthread_join(l->thread, NULL);
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		l->running = 0;
	}
	if (fs->mount_id)
		registry_remove(fs->mount_id);
}
