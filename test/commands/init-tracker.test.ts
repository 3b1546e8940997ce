import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trackerOffer, withFrontMatterLine } from '../../src/commands/init.js';
import { parseBacklog } from '../../src/core/backlog/parse.js';
import { ROOT } from '../helpers/paths.js';

describe('init offers the tracker on a GitHub or GitLab remote', () => {
  it('offers it for a GitHub or GitLab origin, over https or ssh, and for nothing else', () => {
    expect(trackerOffer('https://github.com/acme/widgets.git')?.repo).toBe('acme/widgets');
    expect(trackerOffer('git@github.com:acme/widgets.git')?.repo).toBe('acme/widgets');
    const gitlab = trackerOffer('git@gitlab.com:acme/platform/widgets.git');
    expect(gitlab?.repo).toBe('acme/platform/widgets');
    expect(gitlab?.line).toMatch(/^# tracker: \{ type: gitlab, label: loopfleet \} .* is on GitLab:/);
    expect(trackerOffer('https://gitlab.example.org/acme/widgets.git')).toBeNull();
    expect(trackerOffer('/srv/git/widgets.git')).toBeNull();
    expect(trackerOffer(null)).toBeNull();
  });

  it('writes it commented out: the template parses as before, and as a tracker once the # goes', () => {
    const template = readFileSync(join(ROOT, 'backlog', 'init-template.md'), 'utf8');
    const text = withFrontMatterLine(template, trackerOffer('https://github.com/acme/widgets')!.line);
    expect(parseBacklog(text, 'BACKLOG.md').backlog.config.tracker).toBeUndefined();
    const on = text.replace('# tracker:', 'tracker:');
    expect(parseBacklog(on, 'BACKLOG.md').backlog.config.tracker).toMatchObject({ type: 'github', label: 'loopfleet' });
  });

  it('writes the GitLab one so that it parses as a gitlab tracker once the # goes', () => {
    const template = readFileSync(join(ROOT, 'backlog', 'init-template.md'), 'utf8');
    const text = withFrontMatterLine(template, trackerOffer('https://gitlab.com/acme/widgets')!.line);
    const on = text.replace('# tracker:', 'tracker:');
    expect(parseBacklog(on, 'BACKLOG.md').backlog.config.tracker).toMatchObject({ type: 'gitlab', label: 'loopfleet' });
  });
});
