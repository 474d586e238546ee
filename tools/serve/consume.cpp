#include "consume.h"

namespace serve {

Outcome consume(RequestHandle &handle, const std::function<bool()> &client_alive,
                const std::function<bool(std::vector<ChoiceDelta> &)> &on_deltas) {
    // Short waits, so a client that goes away while nothing is generated (a queued request,
    // a long prefill) is noticed soon.
    constexpr std::chrono::milliseconds kWait(100);
    std::vector<ChoiceDelta> deltas;
    for (;;) {
        deltas.clear();
        bool more = handle.next(deltas, kWait);
        if (!handle.error().empty()) return Outcome::Failed;
        if (!deltas.empty() && !on_deltas(deltas)) {
            handle.cancel();
            return Outcome::ClientGone;
        }
        if (!more) return Outcome::Done;
        if (!client_alive()) {
            handle.cancel();
            return Outcome::ClientGone;
        }
    }
}

}  // namespace serve
