/**
 * The expiry watch's priority queue: live custody transactions by `expires` (epoch seconds of the
 * business clock), so the expiry finds the due ones without walking the others (indexes.ts).
 */
/** One entry of the expiry heap: a live transaction's `expires` (epoch seconds) and the order it was put under watch. */
export interface ExpiryItem {
  expires: number;
  seq: number;
  txId: string;
}

/** Binary min-heap of {@link ExpiryItem} by (expires, seq): the transactions to expire, earliest first. */
export class ExpiryHeap {
  private readonly heap: ExpiryItem[] = [];

  get size(): number {
    return this.heap.length;
  }

  /** Every item, in heap order (for comparisons, not for the expiry). */
  items(): readonly ExpiryItem[] {
    return this.heap;
  }

  peek(): ExpiryItem | undefined {
    return this.heap[0];
  }

  push(item: ExpiryItem): void {
    const a = this.heap;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!ExpiryHeap.less(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }

  pop(): ExpiryItem | undefined {
    const a = this.heap;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && ExpiryHeap.less(a[l], a[m])) m = l;
        if (r < a.length && ExpiryHeap.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }

  private static less(x: ExpiryItem, y: ExpiryItem): boolean {
    return x.expires < y.expires || (x.expires === y.expires && x.seq < y.seq);
  }
}
