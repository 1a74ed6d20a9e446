/* global rs, db, print, sleep */
// mongosh script run once by the `mongodb-init` service: makes the MongoDB server a replica set of
// one member (majority writes need a replica set), idempotently, and waits until
// it is the writable primary.
const member = process.env.MONGODB_RS_MEMBER || 'mongodb:27017';
const setName = process.env.MONGODB_RS_NAME || 'rs0';

try {
  const status = rs.status();
  print(`replica set ${status.set} already initiated`);
} catch (error) {
  if (error.codeName !== 'NotYetInitialized') throw error;
  rs.initiate({ _id: setName, members: [{ _id: 0, host: member }] });
  print(`replica set ${setName} initiated with member ${member}`);
}

for (let waited = 0; !db.hello().isWritablePrimary; waited += 1) {
  if (waited >= 60) throw new Error('no writable primary after 60 s');
  sleep(1000);
}
print(`primary: ${db.hello().primary}`);
