// A problem compile() found in the manifests, as data naming the object and the field (compile.ts for the objects,
// compile-routes.ts for the ModelRoutes both report them).

export interface Problem {
  object: string; // Kind/name
  field: string;
  message: string;
  /** Set when the problem only left a target out of the snapshot: the route's other targets still serve. */
  leftOut?: 'target';
}
