//===- DrainGate.cpp - admission control for a draining daemon ------------===//
//
// This file implements DrainGate: a counter of admitted requests behind a
// flag that, once set, turns new requests away.
//
//===----------------------------------------------------------------------===//
#include "kiln/server/api/DrainGate.h"

namespace kiln::server {

DrainGate::Ticket::~Ticket() {
  if (gate)
    gate->leave();
}

absl::StatusOr<DrainGate::Ticket> DrainGate::enter() {
  std::lock_guard<std::mutex> lock(mutex);
  if (isDraining)
    return absl::UnavailableError(
        "kilnd is shutting down (draining: no new compiles or executions); "
        "retry against another daemon or after it restarts");
  ++active;
  return Ticket(this);
}

void DrainGate::leave() {
  std::lock_guard<std::mutex> lock(mutex);
  if (--active == 0)
    idle.notify_all();
}

void DrainGate::beginDrain() {
  std::lock_guard<std::mutex> lock(mutex);
  isDraining = true;
}

bool DrainGate::draining() const {
  std::lock_guard<std::mutex> lock(mutex);
  return isDraining;
}

bool DrainGate::waitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex);
  return idle.wait_until(lock, deadline, [this] { return active == 0; });
}

int64_t DrainGate::inFlight() const {
  std::lock_guard<std::mutex> lock(mutex);
  return active;
}

} // namespace kiln::server
