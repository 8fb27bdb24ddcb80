// Round-robin order over the projects (lanes) that have audio jobs waiting,
// shared by both bus adapters so they schedule alike. A lane that becomes
// active is served before the ring goes on, so a project's first job waits at
// most for the jobs already in hand; after that every active lane gets one
// job per turn, however long another lane's backlog is.

export class FairRing {
  /** Lanes that have been served and may have more work, in turn order. */
  private ring: string[] = [];
  /** Lanes that became active and have not been served yet, oldest first. */
  private fresh: string[] = [];
  private members = new Set<string>();
  /** Index in `ring` of the lane whose turn is next. */
  private cursor = 0;

  /** The lane may have work: take it into the rotation if it is not in it already. */
  activate(lane: string): void {
    if (this.members.has(lane)) return;
    this.members.add(lane);
    this.fresh.push(lane);
  }

  has(lane: string): boolean {
    return this.members.has(lane);
  }

  get size(): number {
    return this.members.size;
  }

  /** Lanes in the order they should be asked for work now. */
  candidates(): string[] {
    const n = this.ring.length;
    const start = n ? this.cursor % n : 0;
    return [...this.fresh, ...this.ring.slice(start), ...this.ring.slice(0, start)];
  }

  /** The lane just handed out a job: its next turn comes after every other lane's. */
  served(lane: string): void {
    const f = this.fresh.indexOf(lane);
    if (f >= 0) {
      this.fresh.splice(f, 1);
      // Placed just before the lane whose turn is next, i.e. at the end of this round.
      const at = this.ring.length ? this.cursor % this.ring.length : 0;
      this.ring.splice(at, 0, lane);
      this.cursor = at + 1;
      return;
    }
    const i = this.ring.indexOf(lane);
    if (i >= 0) this.cursor = i + 1;
  }

  /** The lane had nothing to hand out: it leaves the rotation until activated again. */
  idle(lane: string): void {
    if (!this.members.delete(lane)) return;
    const f = this.fresh.indexOf(lane);
    if (f >= 0) {
      this.fresh.splice(f, 1);
      return;
    }
    const i = this.ring.indexOf(lane);
    if (i < 0) return;
    this.ring.splice(i, 1);
    if (i < this.cursor) this.cursor -= 1;
  }

  clear(): void {
    this.ring = [];
    this.fresh = [];
    this.members.clear();
    this.cursor = 0;
  }
}
