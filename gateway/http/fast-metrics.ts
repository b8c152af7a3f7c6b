// prom-client's Histogram and Counter with a cheaper observe / inc for the per-call path (Metrics.observe runs about
// fifteen of them per call). prom-client's own builds a closure, checks every label name, hashes the labels into a
// string and, for a histogram, counts the bucket with the bound as an object key (a float turned into a property
// name each time): 9 µs of CPU per call in a profile, a third of it after this. Here a label set's series is found
// through one Map per label (nothing built per call) and cached; it is prom-client's own series object (made by
// prom-client the first time, under its own hash), so scrapes, reset(), remove(), zero() and exemplars stay
// prom-client's. Label names are checked by TypeScript at each call site (LabelValues<T>), not again at run time.
import { Counter, Histogram, type CounterConfiguration, type HistogramConfiguration, type LabelValues } from 'prom-client';

/** What these classes read of prom-client 15's metrics (lib/histogram.js, lib/counter.js); fast-metrics.test.ts holds them equal. */
interface Internals<S> {
  hashMap: Record<string, S>;
  sortedLabelNames: string[];
}

interface HistogramSeries {
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface CounterSeries {
  value: number;
}

interface Slot<S> {
  gen: number;
  s: S;
}

/** Series by label values, one Map level per label name (sorted, as prom-client hashes them). */
class SeriesCache<S> {
  private readonly root = new Map<unknown, unknown>();
  /** Bumped when prom-client drops series (reset, remove): every cached one is looked up again. */
  private gen = 0;

  private readonly names: readonly string[];

  constructor(names: readonly string[]) {
    this.names = names;
  }

  clear(): void {
    this.gen++;
    this.root.clear();
  }

  /** The series of `labels`, from `make` (prom-client's own) the first time. */
  get(labels: Record<string, string | number | undefined>, make: () => S): S {
    let node = this.root;
    const last = this.names.length - 1;
    for (let i = 0; i < last; i++) {
      const v = labels[this.names[i] as string];
      let next = node.get(v) as Map<unknown, unknown> | undefined;
      if (!next) node.set(v, (next = new Map()));
      node = next;
    }
    const leaf = labels[this.names[last] as string];
    let slot = node.get(leaf) as Slot<S> | undefined;
    if (!slot || slot.gen !== this.gen) {
      slot = { gen: this.gen, s: make() };
      node.set(leaf, slot);
    }
    return slot.s;
  }
}

/** prom-client's hash of a label set (lib/util.js fastHashObject over the sorted names). */
function promHash(names: readonly string[], labels: Record<string, string | number | undefined>): string {
  let hash = '';
  for (const name of names) {
    const v = labels[name];
    if (v !== undefined) hash += `${name}:${v},`;
  }
  return hash;
}

type Plain = (this: unknown, labels: unknown, value: unknown) => void;
const HISTOGRAM_OBSERVE = (Histogram.prototype as unknown as { observeWithoutExemplar: Plain }).observeWithoutExemplar;
const COUNTER_INC = (Counter.prototype as unknown as { incWithoutExemplar: Plain }).incWithoutExemplar;

const exemplars = (m: object): boolean => (m as { enableExemplars?: boolean }).enableExemplars === true;

export class FastHistogram<T extends string = string> extends Histogram<T> {
  private readonly bounds: number[];
  private readonly boundKeys: string[];
  private readonly cache: SeriesCache<HistogramSeries>;

  constructor(config: HistogramConfiguration<T>) {
    super(config);
    const self = this as unknown as Internals<HistogramSeries> & { upperBounds: number[] };
    this.bounds = self.upperBounds;
    this.boundKeys = self.upperBounds.map(String);
    this.cache = new SeriesCache(self.sortedLabelNames);
    // prom-client picks observe in its constructor (with or without exemplars); the exemplar form keeps its own.
    if (!exemplars(this)) (this as unknown as { observe: (l: LabelValues<T>, v: number) => void }).observe = (l, v) => this.fast(l, v);
  }

  override reset(): void {
    // Also called by prom-client's constructor, before this class's fields exist.
    this.cache?.clear();
    super.reset();
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<T>): void;
  override remove(...args: unknown[]): void {
    this.cache.clear();
    (super.remove as (...a: unknown[]) => void).apply(this, args);
  }

  private fast(labels: LabelValues<T>, value: number): void {
    const self = this as unknown as Internals<HistogramSeries>;
    if (typeof labels !== 'object' || labels === null || !Number.isFinite(value) || self.sortedLabelNames.length === 0) {
      // The rare forms (no labels: observe(value); a bad value): prom-client's own path and its errors.
      HISTOGRAM_OBSERVE.call(this, labels, value);
      return;
    }
    const l = labels as Record<string, string | number | undefined>;
    const s = this.cache.get(l, () => {
      const hash = promHash(self.sortedLabelNames, l);
      if (!self.hashMap[hash]) this.zero(labels);
      return self.hashMap[hash] as HistogramSeries;
    });
    s.sum += value;
    s.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        const k = this.boundKeys[i] as string;
        s.bucketValues[k] = (s.bucketValues[k] ?? 0) + 1;
        return;
      }
    }
  }
}

export class FastCounter<T extends string = string> extends Counter<T> {
  private readonly cache: SeriesCache<CounterSeries>;

  constructor(config: CounterConfiguration<T>) {
    super(config);
    const self = this as unknown as Internals<CounterSeries>;
    this.cache = new SeriesCache(self.sortedLabelNames);
    if (!exemplars(this)) (this as unknown as { inc: (l?: LabelValues<T> | number, v?: number) => void }).inc = (l, v) => this.fast(l, v);
  }

  override reset(): void {
    this.cache?.clear();
    super.reset();
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<T>): void;
  override remove(...args: unknown[]): void {
    this.cache.clear();
    (super.remove as (...a: unknown[]) => void).apply(this, args);
  }

  private fast(labels: LabelValues<T> | number | undefined, value: number | undefined): void {
    const self = this as unknown as Internals<CounterSeries>;
    const v = value ?? 1;
    if (typeof labels !== 'object' || labels === null || !Number.isFinite(v) || v < 0 || self.sortedLabelNames.length === 0) {
      COUNTER_INC.call(this, labels, value);
      return;
    }
    const l = labels as Record<string, string | number | undefined>;
    const s = this.cache.get(l, () => {
      const hash = promHash(self.sortedLabelNames, l);
      if (!self.hashMap[hash]) COUNTER_INC.call(this, labels, 0);
      return self.hashMap[hash] as CounterSeries;
    });
    s.value += v;
  }
}
