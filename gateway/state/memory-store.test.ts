import { MemoryUsageSink } from '../usage/event.ts';
import { MemoryStore } from './memory-store.ts';
import { storeSuite } from './store-suite.ts';

storeSuite('MemoryStore', async (timing) => {
  const sink = new MemoryUsageSink();
  const store = new MemoryStore(sink, timing);
  return { store, events: async (account) => sink.events.filter((e) => e.account === account), close: () => store.close() };
});
