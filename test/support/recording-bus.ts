// A JobBus for service tests: keeps every published job and can be switched
// "down" to simulate an unreachable broker.
import type { AudioJob, JobBus } from "../../lib/bus/port.js";

export interface RecordingBus extends JobBus {
  published: AudioJob[];
  down: boolean;
}

export function recordingBus(): RecordingBus {
  const bus: RecordingBus = {
    published: [],
    down: false,
    async publish(job) {
      if (bus.down) throw new Error("bus unreachable");
      bus.published.push({ ...job });
    },
    async consume() {
      throw new Error("not used here");
    },
    async publishEvent() {},
    async close() {},
  };
  return bus;
}
