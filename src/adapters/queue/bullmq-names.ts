/** Names both sides of the BullMQ attempt queue agree on. */

export const QUEUE_NAME = 'attempts';

/**
 * BullMQ refuses `:` in a custom job id; an attempt's job id is `<task>:<attempt>`. The mapping is
 * one-to-one (`%` is escaped first), so two attempts never share a BullMQ job.
 */
export function bullJobId(jobId: string): string {
  return jobId.replace(/%/g, '%25').replace(/:/g, '%3A');
}

export function attemptJobId(bullId: string): string {
  return bullId.replace(/%3A/g, ':').replace(/%25/g, '%');
}
