/* Shaped links of osd-bench --layout --link-rate (bench_net.c): one network
 * namespace per device, a veth pair to the benchmark's own namespace, tbf at
 * the link rate on both ends. */
#ifndef OSD_BENCH_NET_H
#define OSD_BENCH_NET_H

#include <stddef.h>
#include <stdint.h>

/* Whether links can be made: CAP_SYS_ADMIN and CAP_NET_ADMIN, ip and tc on
 * PATH. 0, or -EPERM / -ENOENT with the reason in @p err. */
int bench_net_check(char *err, size_t len);
/* Makes the benchmark's namespace and @p ndev devices' namespaces and links
 * shaped to @p rate_bps bit/s each way, then moves the calling thread into
 * the benchmark's namespace. 0, or -errno with the reason in @p err; what
 * was made is removed by bench_net_down() either way. */
int bench_net_up(unsigned ndev, uint64_t rate_bps, char *err, size_t len);
/* In a child about to exec device @p i's daemon: into its namespace. */
int bench_net_enter_device(unsigned i);
/* Device @p i's address (dotted IPv4) as seen from the benchmark. */
void bench_net_addr(unsigned i, char *buf, size_t len);
/* Removes every namespace bench_net_up() made (their veth pairs and qdiscs
 * go with them once their processes are gone). Only system calls: safe in
 * exit and signal paths, and to call twice. */
void bench_net_down(void);
/* Removes the namespaces of osd-bench processes that no longer exist (one
 * killed with SIGKILL cannot clean up), and any with this process's pid.
 * Call it before bench_net_up(). */
void bench_net_sweep(void);
/* Parses a link rate: a decimal number with an optional k, M or G (10^3,
 * 10^6, 10^9) in bit/s, 1M to 400G. 0 or -EINVAL. */
int bench_net_parse_rate(const char *s, uint64_t *bps);

#endif
