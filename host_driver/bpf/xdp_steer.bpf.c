// The xdp backend's XDP program (docs/host.md "Backends"): aggregation traffic (IPv4 without
// options, not fragmented, UDP to the aggregation port) goes to the AF_XDP socket bound to the
// receiving queue; every other frame (ARP, the kernel's own traffic, other UDP) passes to the
// kernel. The loader sets `steer_cfg`: [0] the port (network order; 0: steer nothing), [1] 1 when
// several sockets share the queue (worker and switch --threads): an aggregation frame's TID then
// picks the socket through `tid_sock` (index in xsks_map), else the receiving queue's index does;
// [2] 1 on a switch stand-in's port (`switch --backend xdp`): every frame goes to a socket (the
// stand-in is the link's switch), the frames that are not aggregation traffic to socket 0.
// The dpdk backend's net_af_xdp PMD loads it too (`xdp_prog=`): DPDK 22.11 takes the object's
// first program and puts its socket of queue 0 into the map it finds by the name `xsks_map`.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, __u32);
} xsks_map SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 3);
  __type(key, __u32);
  __type(value, __u32);
} steer_cfg SEC(".maps");

// Where a frame that is not aggregation traffic goes: to the kernel, or on a stand-in's port to
// socket 0 (the receiving queue's when one socket per queue).
static __always_inline int other(struct xdp_md* ctx) {
  __u32 k2 = 2, k1 = 1;
  __u32* all = bpf_map_lookup_elem(&steer_cfg, &k2);
  if (!all || !*all) return XDP_PASS;
  __u32* by_tid = bpf_map_lookup_elem(&steer_cfg, &k1);
  return bpf_redirect_map(&xsks_map, by_tid && *by_tid ? 0 : ctx->rx_queue_index, XDP_PASS);
}

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 256);
  __type(key, __u32);
  __type(value, __u32);
} tid_sock SEC(".maps");

SEC("xdp")
int panama_steer(struct xdp_md* ctx) {
  void* data = (void*)(long)ctx->data;
  void* end = (void*)(long)ctx->data_end;
  struct ethhdr* eth = data;
  if ((void*)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)) return other(ctx);
  struct iphdr* ip = (void*)(eth + 1);
  if ((void*)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP) return other(ctx);
  if (ip->frag_off & bpf_htons(0x3FFF)) return other(ctx);
  struct udphdr* udp = (void*)(ip + 1);
  if ((void*)(udp + 1) > end) return other(ctx);
  __u32 key = 0;
  __u32* port = bpf_map_lookup_elem(&steer_cfg, &key);
  if (!port || *port == 0 || udp->dest != (__u16)*port) return other(ctx);
  __u32 key1 = 1, idx = ctx->rx_queue_index;
  __u32* by_tid = bpf_map_lookup_elem(&steer_cfg, &key1);
  if (by_tid && *by_tid) {
    __u8* tid = (__u8*)(udp + 1) + 4;  // the aggregation header: VER FLAGS JID(2) TID
    if ((void*)(tid + 1) > end) return other(ctx);
    __u32 t = *tid;
    __u32* sock = bpf_map_lookup_elem(&tid_sock, &t);
    idx = sock ? *sock : 0;
  }
  return bpf_redirect_map(&xsks_map, idx, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
