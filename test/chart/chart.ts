// Reading rendered manifests: the YAML documents `helm template` prints, as plain objects.
import { parseAllDocuments } from 'yaml';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export function parseDocs(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((d): d is K8sObject => d !== null);
}

export function find(docs: K8sObject[], kind: string, nameSuffix: string): K8sObject {
  const found = docs.find((d) => d.kind === kind && d.metadata.name.endsWith(nameSuffix));
  if (!found) throw new Error(`no ${kind} named *${nameSuffix} among: ${docs.map((d) => `${d.kind}/${d.metadata.name}`).join(', ')}`);
  return found;
}

export interface Container {
  name: string;
  command: string[];
  env: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  ports?: Array<{ name: string; containerPort: number; protocol?: string }>;
  readinessProbe?: { httpGet: { path: string } };
  livenessProbe?: { httpGet: { path: string } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

export interface PodSpec {
  serviceAccountName: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds: number;
  containers: Container[];
  topologySpreadConstraints?: unknown[];
}

export function podSpec(deployment: K8sObject): PodSpec {
  return (deployment.spec as { template: { spec: PodSpec } }).template.spec;
}

export function container(deployment: K8sObject): Container {
  const c = podSpec(deployment).containers[0];
  if (!c) throw new Error(`${deployment.metadata.name} has no container`);
  return c;
}

export function envOf(c: Container, name: string): Container['env'][number] | undefined {
  return c.env.find((e) => e.name === name);
}
