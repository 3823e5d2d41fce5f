//===- DrainGate.h - admission control for a draining daemon ----*- C++ -*-===//
//
// This file declares DrainGate: Compile and Execute enter through it, so that
// on SIGTERM kilnd can refuse new work and wait for the work in flight.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "absl/status/statusor.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kiln::server {

/// Counts requests in flight and, once draining, refuses new ones with
/// UNAVAILABLE. Thread-safe.
class DrainGate {
public:
  /// Held for the duration of one admitted request. Movable.
  class Ticket {
  public:
    explicit Ticket(DrainGate *gate) : gate(gate) {}
    Ticket(Ticket &&other) noexcept : gate(other.gate) { other.gate = nullptr; }
    Ticket &operator=(Ticket &&) = delete;
    Ticket(const Ticket &) = delete;
    ~Ticket();

  private:
    DrainGate *gate;
  };

  /// Admits a request, or UNAVAILABLE "kilnd is shutting down" once
  /// beginDrain() was called.
  absl::StatusOr<Ticket> enter();

  /// Refuses every later enter(); requests already admitted continue.
  void beginDrain();
  bool draining() const;

  /// Blocks until no admitted request remains or `deadline` passes; true
  /// when the daemon drained.
  bool waitIdle(std::chrono::steady_clock::time_point deadline);

  /// Requests admitted and not yet finished.
  int64_t inFlight() const;

private:
  void leave();

  mutable std::mutex mutex;
  std::condition_variable idle;
  bool isDraining = false;
  int64_t active = 0;
};

} // namespace kiln::server
