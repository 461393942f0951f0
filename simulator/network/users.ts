/**
 * The network's human users (they stand in for signing-app users; spec section 2 "Trusted
 * party" of type `user`): pre-registered on first start, found by id, e-mail or username.
 */
import type { Engine } from '../engine';
import { newId } from '../ids';
import type { NetworkUser } from '../model';

/** Human users pre-registered in the simulated network (the signing-app users). */
const SEED_USERS: ReadonlyArray<Omit<NetworkUser, 'id'>> = [
  { email: 'alice@custody.example', firstName: 'Alice', lastName: 'Archer', username: 'alice' },
  { email: 'bob@custody.example', firstName: 'Bob', lastName: 'Baker', username: 'bob' },
  { email: 'carol@custody.example', firstName: 'Carol', lastName: 'Carter', username: 'carol' },
];

/** Create the pre-registered users on first start (ids random, then persisted). */
export function ensureUsers(eng: Engine): void {
  for (const u of SEED_USERS) {
    if (!Object.values(eng.state.users).some((x) => x.email === u.email)) {
      const id = newId();
      eng.state.users[id] = { id, ...u };
      eng.changed();
    }
  }
}

/** A network user by id, e-mail (case-insensitive) or username; undefined when unknown. */
export function findUser(eng: Engine, idOrEmail: string): NetworkUser | undefined {
  const key = idOrEmail.trim().toLowerCase();
  return eng.state.users[idOrEmail] ?? Object.values(eng.state.users).find((u) => u.email === key || u.username === key);
}
