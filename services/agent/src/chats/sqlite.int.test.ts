import { join } from 'node:path';
import { tempDir } from '@memex/testing';
import { chatStoreContract } from './contract';
import { SqliteChatStore } from './sqlite';

chatStoreContract('SQLite', async () => {
  const dir = tempDir('memex-chats-');
  const store = new SqliteChatStore(join(dir.path, 'agent.db'));
  return {
    store,
    dispose: async () => {
      await store.close();
      dir.remove();
    },
  };
});
