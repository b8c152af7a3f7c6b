// Where the pipeline and the services beside it report failures: the gateway's logger, or a test's.
export interface CallLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}
