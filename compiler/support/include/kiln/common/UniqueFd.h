//===- UniqueFd.h - an owned file descriptor ------------------------------===//
#pragma once

#include <utility>

#include <unistd.h>

namespace kiln {

/// An owned file descriptor, closed on destruction. Move-only.
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : value(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd &&other) noexcept : value(std::exchange(other.value, -1)) {}
  UniqueFd &operator=(UniqueFd &&other) noexcept {
    if (this != &other) {
      reset();
      value = std::exchange(other.value, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;

  int get() const { return value; }
  bool valid() const { return value >= 0; }
  /// Gives up ownership.
  int release() { return std::exchange(value, -1); }

private:
  void reset() {
    if (value >= 0)
      ::close(value);
    value = -1;
  }

  int value = -1;
};

} // namespace kiln
