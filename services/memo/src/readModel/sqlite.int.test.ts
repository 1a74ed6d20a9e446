import { join } from 'node:path';
import { tempDir } from '@memex/testing';
import { readModelContract } from './contract';
import { SqliteMemoReadModel } from './sqlite';

readModelContract('SQLite', async () => {
  const dir = tempDir('memex-rm-');
  const readModel = new SqliteMemoReadModel(join(dir.path, 'memo.db'));
  return {
    readModel,
    dispose: async () => {
      await readModel.close();
      dir.remove();
    },
  };
});
