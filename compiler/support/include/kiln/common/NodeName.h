//===- NodeName.h - how logs, reports and errors name a graph node ---------===//
//
// A node is named by its first named output. A node may leave its first
// results out (unnamed: convolution_backward under output_mask, the unread
// vectors of eigh and svd), so the first output alone can be empty.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMMON_NODENAME_H
#define KILN_COMMON_NODENAME_H

#include "kiln/v1/graph.pb.h"

#include <string>

namespace kiln {

/// The node's first named output; empty when it names none.
inline const std::string &nodeName(const v1::Node &node) {
  for (const v1::Value &output : node.outputs())
    if (!output.name().empty())
      return output.name();
  static const std::string none;
  return none;
}

} // namespace kiln

#endif // KILN_COMMON_NODENAME_H
