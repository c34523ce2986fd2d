/**
 * The configuration in force (docs/decisions.md "Configuration sources"): the file (restart-only settings as running),
 * its secret files read ahead, and Herald's objects from the source, merged (src/crd/merge.ts). It changes on a
 * reload of the file and on a change of the objects or of a peer's Secret, and hands each change to its one
 * listener (the daemon), which puts it in force or refuses it: this stage knows nothing of peers, passes or the
 * speaker.
 *
 * A change of the objects takes the reload's path, so only what changed reaches the sessions; objects changed before
 * the source has synced are merged once, on 'synced' (this stage subscribes before the controller does, so they are
 * in the context of its first full pass). Status-only changes of objects (the leader's conditions) change nothing
 * and cost one merge. An invalid object is ignored, and warned about once per distinct set of problems.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Clock } from '../../bgp/main-thread.ts';
import type { StatusView } from '../admin/view.ts';
import { noAddressSpaceNote } from '../config/notes.ts';
import type { Config } from '../config/schema.ts';
import type { SecretFileTexts } from '../config/secrets.ts';
import type { ConfigObjects, MergedConfig } from '../crd/merge.ts';
import { mergeConfig, NO_OBJECTS } from '../crd/merge.ts';
import { HERALD_KEY_PREFIX } from '../k8s/keys.ts';
import type { HeraldMetrics } from '../metrics/metrics.ts';
import type { Source } from '../sources/source.ts';
import { diffConfig, effectiveReloadConfig } from './diff.ts';
import type { ConfigDiff } from './diff.ts';

/** One change of the configuration in force, as its listener receives it. */
export interface ConfigChange {
  /** The file, restart-only settings as running. */
  readonly file: Config;
  /** The file merged with the objects: what is in force once the change is. */
  readonly merged: MergedConfig;
  /** The secret files of `file`, read ahead (src/config/secrets.ts `readSecretFiles`). */
  readonly files: SecretFileTexts;
  /** The configuration in force before the change. */
  readonly previous: Config;
  /** `merged.config` against `previous` (restart-only fields listed only for a reload of the file). */
  readonly diff: ConfigDiff;
  /** `reload`, or what changed among the objects (`objects read`, `objects changed`). */
  readonly why: string;
}

/** What the configuration's changes are handed to: the daemon. */
export interface ConfigListener {
  /**
   * Put `change` in force. The stage shows the change in force while this runs; a throw refuses it and the stage
   * goes back to what was in force before.
   * @throws MappingError when a peer's password cannot be read (nothing applied)
   */
  apply(change: ConfigChange): void;
  /** The objects changed nothing of the configuration, only what peers may read (a Secret now readable). Never throws. */
  refresh(merged: MergedConfig, files: SecretFileTexts): void;
}

/** The configuration in force as its readers see it (the allocator's pools, the status writer's verdicts). */
export type InForce = Pick<ConfigInForce, 'config' | 'merged'>;

/** Options of {@link ConfigInForce}. */
export interface ConfigInForceOptions {
  /** The configuration file as loaded at start. */
  readonly file: Config;
  /** Its secret files, read ahead (default none read). */
  readonly files?: SecretFileTexts;
  /** Whose BGPNodeConfigOverride applies. */
  readonly nodeName: string;
  /** The source of Herald's objects (none: the file alone). */
  readonly source?: Source;
  /** Peers' Secrets: a change is merged as an object change is. */
  readonly secrets?: { on(event: 'change', listener: () => void): unknown };
  readonly log: Logger;
  /** Reloads are counted (`observeReload`). */
  readonly metrics: HeraldMetrics;
  readonly clock: Clock;
  /** Objects were read again (whether or not the configuration changed): this node's status shows them. */
  readonly onObjectsRead?: () => void;
}

/** See the module comment. */
export class ConfigInForce {
  readonly #o: ConfigInForceOptions;
  #file: Config;
  #files: SecretFileTexts;
  #merged: MergedConfig;
  #listener: ConfigListener | undefined;
  /** Objects changed before the source synced: merged on 'synced'. */
  #objectsPending = false;
  #objectsQueued = false;
  #stopped = false;
  /** The invalid objects last warned about: "Kind/name" → their problems. */
  #verdictsLogged = new Map<string, string>();
  #lastReload: StatusView['lastReload'];
  /** The configuration in force allows no LoadBalancer or external address (logged when it became so). */
  #noAddressSpace = false;

  /** Merges the file with the objects the source holds now. */
  constructor(o: ConfigInForceOptions) {
    this.#o = o;
    this.#file = o.file;
    this.#files = o.files ?? new Map();
    this.#merged = mergeConfig(o.file, this.#objects(), o.nodeName);
  }

  /**
   * Follow the source's and the Secrets' changes from now on. Call it before the controller subscribes to the source
   * (Controller.start), so the objects read while syncing are in the context of its first full pass.
   */
  follow(): void {
    const o = this.#o;
    const source = o.source;
    if (!source) return;
    source.on('change', (keys: readonly string[]) => {
      if (!keys.some((k) => k.startsWith(HERALD_KEY_PREFIX))) return;
      if (source.synced()) this.#scheduleObjects();
      else this.#objectsPending = true;
    });
    source.on('synced', () => {
      if (this.#objectsPending) this.#mergeObjects('objects read');
      this.#logAddressSpace();
    });
    o.secrets?.on('change', () => this.#scheduleObjects());
  }

  /** The one listener of the changes (the daemon); until set, changes are in force with nobody told. */
  listen(listener: ConfigListener): void {
    this.#listener = listener;
  }

  /** The configuration in force: `merged.config`. */
  get config(): Config {
    return this.#merged.config;
  }

  /** The file merged with the objects, with each object's verdict and each peer's origin. */
  get merged(): MergedConfig {
    return this.#merged;
  }

  /** The file as running (restart-only settings as they were at start). */
  get file(): Config {
    return this.#file;
  }

  /** The secret files of the file in force, read ahead. */
  get files(): SecretFileTexts {
    return this.#files;
  }

  /** How the last reload of the file ended (undefined: none yet). */
  get lastReload(): StatusView['lastReload'] {
    return this.#lastReload;
  }

  /**
   * A new, validated file: restart-only settings keep their running values (and are warned about), the rest is
   * merged with the objects and handed to the listener. The caller runs the pipeline, then calls {@link reloaded}.
   * @param files its secret files, read ahead (default: those read before)
   * @returns the diff put in force, with the restart-only fields that changed
   * @throws what the listener throws (nothing in force changes)
   */
  reload(next: Config, files: SecretFileTexts = this.#files): ConfigDiff {
    const restartRequired = diffConfig(this.#file, next).restartRequired;
    const file = effectiveReloadConfig(this.#file, next);
    const d = this.#put(file, mergeConfig(file, this.#objects(), this.#o.nodeName), files, 'reload');
    if (restartRequired.length > 0) this.#o.log.warn({ fields: restartRequired }, 'these settings change only on restart; running values kept');
    return { ...d, restartRequired, empty: d.empty && restartRequired.length === 0 };
  }

  /**
   * The reload `d` is in force; `routesError` says why its routes could not be applied (the previous routes stay
   * announced), and makes the reload a failed one.
   */
  reloaded(d: ConfigDiff, routesError?: string): void {
    const at = new Date(this.#o.clock.now()).toISOString();
    this.#lastReload = routesError === undefined ? { at, ok: true } : { at, ok: false, errors: [`the new configuration is in force but its routes could not be applied (the previous routes stay announced): ${routesError}`] };
    this.#o.metrics.observeReload(routesError === undefined, this.#o.clock.now());
    this.#o.log.info(
      { added: d.peers.added.map((p) => p.name), removed: d.peers.removed.map((p) => p.name), changed: d.peers.changed.map((c) => c.name), routesChanged: d.routesChanged, policyChanged: d.policyChanged },
      'configuration reloaded',
    );
  }

  /** A reload refused (an invalid file, a password not readable): the configuration in force stays. */
  rejected(errors: string[]): void {
    this.#lastReload = { at: new Date(this.#o.clock.now()).toISOString(), ok: false, errors };
    this.#o.metrics.observeReload(false, this.#o.clock.now());
  }

  /** Stops following the objects (shutdown). */
  stop(): void {
    this.#stopped = true;
  }

  /** Put a change in force: shown in force while the listener applies it, undone when it throws. */
  #put(file: Config, merged: MergedConfig, files: SecretFileTexts, why: string): ConfigDiff {
    const before = { file: this.#file, merged: this.#merged, files: this.#files };
    const diff = diffConfig(before.merged.config, merged.config);
    this.#file = file;
    this.#merged = merged;
    this.#files = files;
    try {
      this.#listener?.apply({ file, merged, files, previous: before.merged.config, diff, why });
    } catch (err) {
      this.#file = before.file;
      this.#merged = before.merged;
      this.#files = before.files;
      throw err;
    }
    if (this.#o.source?.synced()) this.#logAddressSpace();
    return diff;
  }

  /** Says once, when it becomes true, that no LoadBalancer or external address can be announced (src/config/notes.ts). */
  #logAddressSpace(): void {
    const note = noAddressSpaceNote(this.config);
    if ((note !== undefined) === this.#noAddressSpace) return;
    this.#noAddressSpace = note !== undefined;
    if (note !== undefined) this.#o.log.warn({ field: note.path }, note.message);
    else this.#o.log.info('pools or allowedPrefixes now allow LoadBalancer and external addresses');
  }

  /** Herald's objects from the source (none without one). */
  #objects(): ConfigObjects {
    const snap = this.#o.source?.snapshot();
    if (!snap) return NO_OBJECTS;
    return {
      BGPPeer: [...snap.heraldObjects('BGPPeer')],
      BGPAdvertisement: [...snap.heraldObjects('BGPAdvertisement')],
      IPAddressPool: [...snap.heraldObjects('IPAddressPool')],
      BGPNodeConfigOverride: [...snap.heraldObjects('BGPNodeConfigOverride')],
    };
  }

  #scheduleObjects(): void {
    if (this.#objectsQueued || this.#stopped) return;
    this.#objectsQueued = true;
    setImmediate(() => {
      this.#objectsQueued = false;
      if (!this.#stopped) this.#mergeObjects('objects changed');
    });
  }

  /** Merge the objects again and put what changed in force, as a reload does. Never throws. */
  #mergeObjects(why: string): void {
    this.#objectsPending = false;
    this.#o.onObjectsRead?.();
    const merged = mergeConfig(this.#file, this.#objects(), this.#o.nodeName);
    this.#logVerdicts(merged);
    if (isDeepStrictEqual(merged.config, this.#merged.config) && isDeepStrictEqual(merged.override, this.#merged.override)) {
      this.#merged = merged;
      this.#listener?.refresh(merged, this.#files);
      return;
    }
    try {
      const d = this.#put(this.#file, merged, this.#files, why);
      this.#o.log.info({ added: d.peers.added.map((p) => p.name), removed: d.peers.removed.map((p) => p.name), changed: d.peers.changed.map((c) => c.name), policyChanged: d.policyChanged, invalid: merged.verdicts.filter((v) => v.issues.length > 0).map((v) => `${v.kind}/${v.name}`) }, 'configuration objects applied');
    } catch (err) {
      this.#o.log.error({ err }, 'cannot apply the configuration objects; the running configuration stays');
    }
  }

  /** Warns once per object and distinct set of problems: an invalid object is ignored, with its fields named. */
  #logVerdicts(merged: MergedConfig): void {
    const now = new Map<string, string>();
    for (const v of merged.verdicts) {
      if (v.issues.length === 0) continue;
      const key = `${v.kind}/${v.name}`;
      const text = v.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
      now.set(key, text);
      if (this.#verdictsLogged.get(key) !== text) this.#o.log.warn({ object: key, generation: v.generation, problems: v.issues.map((i) => `${i.path}: ${i.message}`) }, 'configuration object ignored');
    }
    this.#verdictsLogged = now;
  }
}
