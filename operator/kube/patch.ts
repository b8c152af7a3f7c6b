// Writes to custom resources: JSON merge patches (custom resources refuse strategic merge), status through /status.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { crRef, type Clients, type CrKind, type CustomObject } from './clients.ts';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const FIELD_MANAGER = 'svc-gateway-operator';

/** Merge-patches `status`; fields set to null are removed. Does not bump metadata.generation. */
export async function patchStatus(c: Clients, kind: CrKind, name: string, status: Record<string, unknown>): Promise<void> {
  await c.custom.patchNamespacedCustomObjectStatus({ ...crRef(c, kind), name, body: { status }, fieldManager: FIELD_MANAGER }, MERGE);
}

/**
 * Merge-patches metadata (finalizers, annotations) with the resourceVersion the change was computed from, so a
 * concurrent write makes it fail with 409 instead of overwriting (the list of finalizers is replaced whole).
 */
export async function patchMetadata(c: Clients, kind: CrKind, name: string, resourceVersion: string, metadata: Record<string, unknown>): Promise<CustomObject> {
  return (await c.custom.patchNamespacedCustomObject(
    { ...crRef(c, kind), name, body: { metadata: { ...metadata, resourceVersion } }, fieldManager: FIELD_MANAGER },
    MERGE,
  )) as CustomObject;
}
