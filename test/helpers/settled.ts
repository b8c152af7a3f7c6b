// Settles run after the answer is sent (gateway/pipeline/settle.ts): a test that reads the ledger, a view or the
// usage events right after its calls' answers waits here first, bounded, until no hold of the account is open.
interface Ledgers {
  ledger(account: string): Promise<{ openHolds: number }>;
}

export async function settled(store: Ledgers, account: string, opts: { tries?: number; stepMs?: number } = {}): Promise<void> {
  const tries = opts.tries ?? 150;
  for (let i = 0; i < tries && (await store.ledger(account)).openHolds > 0; i++) await new Promise((r) => setTimeout(r, opts.stepMs ?? 20));
}
