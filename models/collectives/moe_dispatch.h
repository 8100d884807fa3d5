#pragma once
// DeepEP's deduplicated expert-parallel all-to-all (workload.training.ep_all_to_all: deepep): the
// expected distinct destination nodes and GPUs of one token, in closed form, and the per-pair byte
// fractions the all-to-all plan gives its flows (deepep_plan.cc build_deepep_plan).
//
// What DeepEP's normal (training / prefill) kernels send (DeepSeek-V3, arXiv:2412.19437 §3.2.2:
// "tokens will be first transmitted via IB to the GPUs with the same in-node index on their target
// nodes", then "forwarded via NVLink to specific GPUs that host their target experts";
// deepseek-ai/DeepEP README, "forwarding data from NVLink domain to RDMA domain";
// csrc/deep_ep.cpp: rdma_rank = rank / NUM_MAX_NVL_PEERS, nvl_rank = rank % NUM_MAX_NVL_PEERS;
// get_dispatch_layout's num_tokens_per_rdma_rank and is_token_in_rank): a token crosses the RDMA
// network once per destination node, to the GPU of that node with its own local index (same
// NVLink rank, same rail), however many of its top-k experts live there; that GPU forwards it over
// NVLink once to every GPU of its node holding at least one of them (the receiver lays the token
// out per local expert itself). Tokens for the sender's own node go over NVLink directly, once per
// destination GPU. Combine is the mirror. Flat (NCCL's all-to-all under Megatron-Core's token
// dispatcher) sends each of the k slots on its own: the difference is what DeepEP saves.

#include "models/spec/collective_op.h"

namespace traincast::models {

/// Expected fan-out of one token over an expert-parallel group of `nodes` nodes x
/// `gpus_per_node` GPUs, its `experts` routed experts spread evenly (experts / (nodes x
/// gpus_per_node) per GPU), top_k experts per token, at most max_nodes_per_token nodes (0 = all).
///
/// Routing model (balanced, as the MoE generator assumes everywhere): a token picks
/// M = min(max_nodes_per_token, nodes) nodes (all when 0) uniformly at random, then its top_k
/// experts uniformly without replacement among the M x c experts of those nodes, c = experts /
/// nodes. DeepSeek-V3's node-limited routing (arXiv:2412.19437 §2.1.2: "each token will be sent to
/// at most M nodes, which are selected according to the sum of the highest K_r/M affinity scores
/// of the experts distributed on each node"; M = 4) picks the nodes by affinity; with balanced
/// affinities every M-subset is equally likely, which is this model. Every expert still gets
/// top_k / experts of the tokens.
///
/// Derivation: a chosen node receives none of the k experts with the hypergeometric probability
/// of drawing k from the C = M·c candidates all outside its c: q_node = C(C − c, k) / C(C, k)
/// = Π_{i=0}^{k−1} (C − c − i) / (C − i). So the expected distinct nodes per token are
///   E[D_node] = M · (1 − C(M·c − c, k) / C(M·c, k)),
/// unlimited (M = nodes, C = experts): nodes · (1 − C(E − E/N, k) / C(E, k)), the expected
/// occupied bins of k draws without replacement. A given node receives the token with probability
/// E[D_node] / nodes. Likewise a given GPU (g = experts / GPUs experts) with probability
///   p_gpu = (M / nodes) · (1 − C(M·c − g, k) / C(M·c, k)).
/// Worked (tests/models/collectives/moe_dispatch_test.cc): DeepSeek-V3, 256 experts, top-8, EP 64
/// on 8 nodes (c = 32, g = 4): unlimited E[D_node] = 8 · (1 − Π (224 − i)/(256 − i)) = 5.2947;
/// M = 4: 4 · (1 − Π (96 − i)/(128 − i)) = 3.6290, so DeepEP moves 3.6290 / 8 = 0.4536 of flat's
/// RDMA bytes (0.6618 without the limit).
struct DeepEpFanout {
  int nodes = 0;                ///< N, nodes the group spans
  int gpus_per_node = 0;        ///< G, the group's GPUs on every node
  int routed_nodes = 0;         ///< M: min(max_nodes_per_token, N), N when 0
  double nodes_per_token = 0;   ///< E[D_node], expected distinct destination nodes of a token
  double gpus_per_token = 0;    ///< E[D_gpu] = N·G·p_gpu, expected distinct destination GPUs
  double node_probability = 0;  ///< E[D_node] / N: a given node receives the token
  double gpu_probability = 0;   ///< p_gpu: a given GPU receives the token
  /// RDMA bytes of deepep / flat: E[D_node] / top_k, <= 1 (a node receives the token at most as
  /// often as it receives slots: P(node) <= E[slots on node] = top_k / N).
  double rdma_ratio = 0;
};

/// The fan-out above. Throws std::invalid_argument when nodes or gpus_per_node < 1, experts is
/// not a multiple of nodes x gpus_per_node, top_k is outside [1, experts], max_nodes_per_token < 0,
/// or the M routed nodes hold fewer than top_k experts ("deepep all-to-all: ..." messages naming
/// workload.training.moe_max_nodes_per_token for the last).
DeepEpFanout deepep_fanout(int experts, int top_k, int max_nodes_per_token, int nodes, int gpus_per_node);

/// Per-flow byte fractions of the call's bytes (the flat send buffer, top_k slots per token) for
/// DeepEP's dispatch over the fan-out f, one phase (DeepEP's forwarders relay RDMA chunks over
/// NVLink as they arrive, so both stages stream at once):
///   rdma_peer: from each GPU to the GPU of its local index on every other node,
///              P(node) / top_k (the token once per node);
///   nvlink_pair: between two GPUs of one node, N · p_gpu / top_k: the sender's own tokens for the
///              receiver (p_gpu / k) plus those it forwards for the N − 1 senders of its rail on
///              the other nodes ((N − 1) · p_gpu / k).
/// Flat's, for comparison: 1 / (N·G) per pair, so 1 / N through each remote node's NIC and
/// (G − 1) / G out of each GPU's NVLink port; deepep's never exceed them (tests).
struct DeepEpFractions {
  double rdma_peer = 0;
  double nvlink_pair = 0;
};
DeepEpFractions deepep_fractions(const DeepEpFanout& f, int top_k);

}  // namespace traincast::models
