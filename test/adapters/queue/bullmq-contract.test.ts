import { BullmqCoordinatorQueue } from '../../../src/adapters/queue/bullmq-coordinator.js';
import { BullmqWorkerQueue } from '../../../src/adapters/queue/bullmq-worker.js';
import { parseQueueUrl } from '../../../src/adapters/queue/redis-url.js';
import { describeAttemptQueue } from '../../helpers/attempt-queue-contract.js';
import { startRedis } from '../../helpers/redis-server.js';
import { FAST, TEST_KEYS } from '../../helpers/bullmq-support.js';

const quiet = () => undefined;

describeAttemptQueue('BullMQ on a real redis-server', async () => {
  const redis = await startRedis();
  const address = parseQueueUrl(redis.url);
  const coordinator = await BullmqCoordinatorQueue.open(address, TEST_KEYS, quiet);
  const workers: BullmqWorkerQueue[] = [];
  return {
    coordinator,
    worker: () => {
      const w = new BullmqWorkerQueue(address, TEST_KEYS, quiet, FAST);
      workers.push(w);
      return w;
    },
    close: async () => {
      for (const w of workers) await w.close(false);
      await coordinator.close();
      await redis.close();
    },
  };
});
