import t from 'tap';

t.test('tests run on Node 24 with native type stripping', async (t) => {
  const major = Number(process.versions.node.split('.')[0]);
  t.ok(major >= 24, `node ${process.versions.node}`);
});
