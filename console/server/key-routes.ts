// /dashboard/keys: list, create (the dialog shows the key once, in this answer only), revoke, rotate.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GRACE_PERIODS, KeyActionError, refusalStatus, type CreatedKey, type KeyActor } from '../keys/backend.ts';
import { isKeyName } from '../keys/key-name.ts';
import { parseKeyForm, type FieldErrors } from '../keys/form.ts';
import type { KeySpec, PlanLimits } from '../keys/key-spec.ts';
import { NO_POLICY, policyErrors } from '../keys/self-service-policy.ts';
import { mayActOn, mayCreate, OWN_KEYS_MAX, ownedUnrevoked, visibleRows, type KeyRights } from '../keys/own-keys.ts';
import { revokePage, rotatePage } from '../pages/key-actions.ts';
import { keysPage, PAGE_SIZE } from '../pages/keys.ts';
import { utc } from '../pages/layout.ts';
import { noteAudit } from './audit-hook.ts';
import { accountsWith, Forbidden, formOf, queryOf, sendHtml, userOf, type ConsoleDeps, type SignedIn } from './context.ts';

interface Extra {
  form?: Record<string, string>;
  errors?: FieldErrors & { form?: string };
  created?: CreatedKey;
  notice?: string;
}

function curlExample(deps: ConsoleDeps, req: FastifyRequest, key: string, models: string[] | null): string {
  const base = deps.apiBaseUrl ?? `${req.protocol}://${req.host}`;
  const model = models?.find((m) => !/[*?]/.test(m)) ?? deps.exampleModel;
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }], metadata: { task_type: 'hello' } });
  return `curl -s ${base}/v1/chat/completions \\\n  -H "Authorization: Bearer ${key}" -H 'content-type: application/json' \\\n  -d '${body}'`;
}

/** The account the request names (or the first the user may see), checked against `get`. */
async function pickAccount(deps: ConsoleDeps, u: SignedIn, asked: string | undefined): Promise<{ account: string; accounts: string[] }> {
  const accounts = await accountsWith(deps, u.principal, 'get');
  const account = asked ?? accounts[0];
  if (account === undefined) throw new Forbidden('You may not see any account. Ask your platform team for a Role on accounts.');
  if (!accounts.includes(account)) throw new Forbidden(`You may not see account ${account}.`);
  return { account, accounts };
}

/** Every key of the account, in the backend's order (the list is filtered and ordered per person here). */
const ALL = 100_000;

async function rightsOn(deps: ConsoleDeps, u: SignedIn, account: string): Promise<KeyRights> {
  const [manage, own] = await Promise.all([
    deps.authz.allowed(u.principal, 'manage-keys', account),
    deps.authz.allowed(u.principal, 'create-own-keys', account),
  ]);
  return { manage, own };
}

async function mayCreateIn(deps: ConsoleDeps, u: SignedIn, account: string): Promise<KeyRights> {
  const r = await rightsOn(deps, u, account);
  if (!mayCreate(r)) throw new Forbidden(`You may not manage the keys of account ${account}.`);
  if (r.manage) return r;
  const max = (await deps.keys.planLimits(account)).selfService?.maxKeysPerPerson ?? deps.ownKeysMax ?? OWN_KEYS_MAX;
  const owned = ownedUnrevoked(u.name, (await deps.keys.list(account, 0, ALL, deps.now())).rows);
  if (owned >= max) throw new Forbidden(`You have ${owned} keys in account ${account}, the most one person may have. Revoke one first.`);
  return r;
}

/** A self-service person's key (not manage-keys) within the Plan's and Account's selfService caps: errors by field. */
function capErrors(r: KeyRights, plan: PlanLimits, spec: Pick<KeySpec, 'monthlyBudgetNano' | 'models'>): FieldErrors {
  return r.manage ? {} : policyErrors(spec, plan.selfService ?? NO_POLICY);
}

/** manage-keys acts on any key; create-own-keys only on the person's own (another's is refused as if unseen). */
async function mayManage(deps: ConsoleDeps, u: SignedIn, account: string, name: string): Promise<void> {
  const r = await rightsOn(deps, u, account);
  if (r.manage) return;
  if (r.own) {
    const key = (await deps.keys.list(account, 0, ALL, deps.now())).rows.find((k) => k.name === name);
    if (key && mayActOn(r, u.name, key)) return;
    throw new Forbidden(`You may act only on your own keys of account ${account}.`);
  }
  throw new Forbidden(`You may not manage the keys of account ${account}.`);
}

async function render(
  deps: ConsoleDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  extra: Extra & { account: string | undefined },
): Promise<FastifyReply> {
  const u = userOf(req);
  const { account, accounts } = await pickAccount(deps, u, extra.account);
  const pageNo = Math.max(1, Math.floor(Number(queryOf(req).page ?? 1)) || 1);
  const now = deps.now();
  const [all, plan, rights] = await Promise.all([deps.keys.list(account, 0, ALL, now), deps.keys.planLimits(account), rightsOn(deps, u, account)]);
  // A person's own keys first; the admin token is nobody's in particular (its keys are just the account's).
  const me = u.principal.kind === 'user' ? u.name : null;
  const rows = me === null ? all.rows : visibleRows(rights, me, all.rows);
  const keys = { rows: rows.slice((pageNo - 1) * PAGE_SIZE, pageNo * PAGE_SIZE), total: rows.length };
  const created = extra.created ? { ...extra.created, curl: curlExample(deps, req, extra.created.key, extra.created.row.models) } : undefined;
  const view = { ...extra, now, user: u, me, accounts, account, canManage: mayCreate(rights), ownOnly: !rights.manage, keys, pageNo, plan, created };
  return sendHtml(reply, status, keysPage({ ...view, mayAct: (k) => mayActOn(rights, u.name, k) }));
}

/** The person with the groups their sign-in gave (the admin token has none), recorded on the keys they make. */
function actorOf(u: SignedIn): KeyActor {
  return u.principal.kind === 'user' ? { name: u.name, groups: u.principal.groups } : u.name;
}

/** The account and key an action names; a name that cannot be a key's is refused (400) before anything else. */
function actionOf(req: FastifyRequest): { account: string; name: string } {
  const src = req.method === 'POST' ? formOf(req) : queryOf(req);
  const name = src.name ?? '';
  if (!isKeyName(name)) throw new KeyActionError(`"${name}" is not a key name.`, null, 'bad-name');
  return { account: src.account ?? '', name };
}

export function keyRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/dashboard/keys', async (req, reply) => render(deps, req, reply, 200, { account: queryOf(req).account }));

  app.post('/dashboard/keys', { config: { audit: { action: 'key-created' } } }, async (req, reply) => {
    const form = formOf(req);
    const u = userOf(req);
    const { account } = await pickAccount(deps, u, form.account);
    noteAudit(req, { account });
    const rights = await mayCreateIn(deps, u, account);
    const plan = await deps.keys.planLimits(account);
    const parsed = parseKeyForm(form, plan, deps.now());
    if (!parsed.ok) return render(deps, req, reply, 422, { account, form, errors: parsed.errors });
    const capped = capErrors(rights, plan, parsed.spec);
    if (Object.keys(capped).length > 0) return render(deps, req, reply, 422, { account, form, errors: capped });
    try {
      const created = await deps.keys.create(account, parsed.spec, actorOf(u), deps.now());
      return await render(deps, req, reply, 201, { account, created });
    } catch (err) {
      if (!(err instanceof KeyActionError)) throw err;
      const status = refusalStatus(err.refusal);
      return render(deps, req, reply, status, { account, form, errors: err.field ? { [err.field]: err.message } : { form: err.message } });
    }
  });

  app.get('/dashboard/keys/revoke', async (req, reply) => {
    const a = actionOf(req);
    const u = userOf(req);
    await mayManage(deps, u, (await pickAccount(deps, u, a.account)).account, a.name);
    await deps.keys.expectKey(a.account, a.name);
    return sendHtml(reply, 200, revokePage({ user: u, ...a }));
  });

  app.post('/dashboard/keys/revoke', { config: { audit: { action: 'key-revoked' } } }, async (req, reply) => {
    const a = actionOf(req);
    const u = userOf(req);
    await mayManage(deps, u, (await pickAccount(deps, u, a.account)).account, a.name);
    if ((formOf(req).confirm ?? '').trim() !== a.name) {
      return sendHtml(reply, 422, revokePage({ user: u, ...a, error: `Type ${a.name} exactly to confirm.` }));
    }
    await deps.keys.revoke(a.account, a.name, u.name, deps.now());
    return render(deps, req, reply, 200, { account: a.account, notice: `Key ${a.name} is revoked.` });
  });

  app.get('/dashboard/keys/rotate', async (req, reply) => {
    const a = actionOf(req);
    const u = userOf(req);
    await mayManage(deps, u, (await pickAccount(deps, u, a.account)).account, a.name);
    await deps.keys.expectKey(a.account, a.name);
    return sendHtml(reply, 200, rotatePage({ user: u, ...a }));
  });

  app.post('/dashboard/keys/rotate', { config: { audit: { action: 'key-rotated' } } }, async (req, reply) => {
    const a = actionOf(req);
    const u = userOf(req);
    await mayManage(deps, u, (await pickAccount(deps, u, a.account)).account, a.name);
    const grace = GRACE_PERIODS.find((g) => g.value === formOf(req).grace);
    if (!grace) return sendHtml(reply, 422, rotatePage({ user: u, ...a, error: 'Choose a grace period.' }));
    // The successor keeps the key's budget and models: a self-service person's must be within today's caps.
    const old = (await deps.keys.list(a.account, 0, ALL, deps.now())).rows.find((k) => k.name === a.name);
    const capped = old ? Object.values(capErrors(await rightsOn(deps, u, a.account), await deps.keys.planLimits(a.account), old)) : [];
    if (capped.length > 0) {
      const error = `Key ${a.name} is outside the self-service policy of this account, so its successor would be too: ${capped.join(' ')} Create a new key within the policy instead, or ask someone with manage-keys to rotate it.`;
      return sendHtml(reply, 422, rotatePage({ user: u, ...a, error }));
    }
    let created: CreatedKey;
    try {
      created = await deps.keys.rotate(a.account, a.name, grace.ms, actorOf(u), deps.now());
    } catch (err) {
      // A state that forbids it is told on the form; anything else is the error page (plugin.ts) with its status.
      if (!(err instanceof KeyActionError) || err.refusal !== 'conflict') throw err;
      return sendHtml(reply, 409, rotatePage({ user: u, ...a, error: err.message }));
    }
    noteAudit(req, { detail: `Rotated to ${created.row.name}.` });
    const now = deps.now();
    const stops = created.previousStopsAt ?? now + grace.ms;
    const notice =
      grace.ms === 0 || stops <= now
        ? `Key ${a.name} is revoked.`
        : stops < now + grace.ms
          ? `Key ${a.name} stops at ${utc(stops)}, when it expires: before the ${grace.label.toLowerCase()} grace period ends.`
          : `Key ${a.name} will be revoked after ${grace.label.toLowerCase()}.`;
    return render(deps, req, reply, 201, { account: a.account, created, notice });
  });
}
