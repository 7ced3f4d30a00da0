#include "broker/daemon/jobs/event_kind.h"

namespace skyslurm::daemon {

std::string_view EventName(EventKind kind) {
  switch (kind) {
    case EventKind::kSubmitted:
      return "submitted";
    case EventKind::kMoved:
      return "moved";
    case EventKind::kReplaced:
      return "re-placed";
    case EventKind::kRestarted:
      return "restarted";
    case EventKind::kRefused:
      return "refused";
    case EventKind::kWaiting:
      return "waiting";
    case EventKind::kKept:
      return "kept";
    case EventKind::kCancelled:
      return "cancelled";
    case EventKind::kMoveStarted:
      return "move-started";
    case EventKind::kMoveAbandoned:
      return "move-abandoned";
    case EventKind::kMoveDeferred:
      return "move-deferred";
    case EventKind::kRecovered:
      return "recovered";
    case EventKind::kStarted:
      return "started";
    case EventKind::kState:
      return "state";
    case EventKind::kEnded:
      return "ended";
    case EventKind::kClusterLost:
      return "cluster-lost";
    case EventKind::kRestarting:
      return "restarting";
    case EventKind::kDuplicateCancelled:
      return "duplicate-cancelled";
    case EventKind::kCopied:
      return "copied";
    case EventKind::kFetched:
      return "fetched";
    case EventKind::kSpread:
      return "spread";
    case EventKind::kTasksCancelled:
      return "tasks-cancelled";
    case EventKind::kTasksMoved:
      return "tasks-moved";
    case EventKind::kDependency:
      return "dependency";
    case EventKind::kUpdated:
      return "updated";
    case EventKind::kMoveAsked:
      return "move-asked";
  }
  return "event";
}

}  // namespace skyslurm::daemon
