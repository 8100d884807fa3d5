#include "models/workload/chakra_trace.h"

namespace traincast::models {

const char* chakra_name(ChakraCollective c) {
  switch (c) {
    case ChakraCollective::all_reduce:
      return "ALL_REDUCE";
    case ChakraCollective::reduce:
      return "REDUCE";
    case ChakraCollective::all_gather:
      return "ALL_GATHER";
    case ChakraCollective::gather:
      return "GATHER";
    case ChakraCollective::scatter:
      return "SCATTER";
    case ChakraCollective::broadcast:
      return "BROADCAST";
    case ChakraCollective::all_to_all:
      return "ALL_TO_ALL";
    case ChakraCollective::reduce_scatter:
      return "REDUCE_SCATTER";
    case ChakraCollective::reduce_scatter_block:
      return "REDUCE_SCATTER_BLOCK";
    case ChakraCollective::barrier:
      return "BARRIER";
  }
  return "?";
}

const char* chakra_name(ChakraNodeType t) {
  switch (t) {
    case ChakraNodeType::metadata:
      return "METADATA_NODE";
    case ChakraNodeType::mem_load:
      return "MEM_LOAD_NODE";
    case ChakraNodeType::mem_store:
      return "MEM_STORE_NODE";
    case ChakraNodeType::comp:
      return "COMP_NODE";
    case ChakraNodeType::comm_send:
      return "COMM_SEND_NODE";
    case ChakraNodeType::comm_recv:
      return "COMM_RECV_NODE";
    case ChakraNodeType::comm_coll:
      return "COMM_COLL_NODE";
  }
  return "?";
}

}  // namespace traincast::models
