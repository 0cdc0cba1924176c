#!/usr/bin/env python3
"""bench/clusterfuzz's comparison: what OSS-Fuzz's run scripts and ClusterFuzz's libFuzzer
engine read from each flow's output, for the libFuzzer build and the sift build, side by side.

The patterns are restated from their sources (ClusterFuzz: bot/fuzzers/libFuzzer/stats.py,
engine.py, libfuzzer.py, stacktraces/constants.py; OSS-Fuzz: base-runner/bad_build_check),
and the crash type and state from a small subset of ClusterFuzz's stack analyzer: the ignore
list below holds the entries of STACK_FRAME_IGNORE_REGEXES that occur in these reports.

Usage: cf_parse.py LIBFUZZER_DIR SIFT_DIR (folders that bench/clusterfuzz filled)."""
import hashlib
import os
import re
import sys

TESTCASE = re.compile(r'.*Test unit written to\s*(.*)')
STATS = re.compile(r'stat::([A-Za-z_]+):\s*([^\s]+)')
BAD_INSTRUMENTATION = re.compile(r'.*ERROR:.*Is the code instrumented for coverage.*')
CRASH = re.compile(r'.*Test unit written to.*crash')
OOM = re.compile(r'.*Test unit written to.*oom')
TIMEOUT = re.compile(r'.*Test unit written to.*timeout')
SLOW = re.compile(r'.*Test unit written to.*slow-unit')
LEAK = re.compile(r'.*ERROR: LeakSanitizer.*')
DICT_USED = re.compile(r'Dictionary: \d+ entries')
DICT_FAILED = re.compile(r'ParseDictionaryFile: error in line (\d+)')
MODULES = re.compile(r'^INFO:\s+Loaded\s+\d+\s+(modules|PC tables)\s+\((\d+)\s+.*\).*')
MAX_LEN = re.compile(r'.*-max_len is not provided; libFuzzer will not generate inputs larger'
                     r' than (\d+) bytes.*')
SEED_CORPUS = re.compile(r'INFO:\s+seed corpus:\s+files:\s+(\d+).*rss:\s+(\d+)Mb.*')
INITED = re.compile(r'(#\d+\s+INITED\s+|INFO:\s+-fork=\d+:\s+fuzzing in separate process).*')
LOG_LINE = re.compile(r'^#\d+[\s]*(READ|INITED|NEW|pulse|REDUCE|RELOAD|DONE|:)\s.*')
MERGE_STATS = re.compile(r'MERGE-OUTER:\s+\d+\s+new files with\s+(\d+)\s+new features added;'
                         r'\s+(\d+)\s+new coverage edges.*')
BUILD_EDGES = re.compile(r'INFO: Loaded \d+ module.*\(.*(counters|guards)\):\s+(\d+)')
BUILD_BAD = 'ERROR: no interesting inputs were found. Is the code instrumented'
NONCRASH_RC = {0, 72}  # and -15 (SIGTERM), which a shell reports as 143

IGNORED_FRAMES = re.compile('|'.join([
    r'^fuzzer::', r'^main', r'^__libc_', r'^_start', r'^__asan', r'^__sanitizer', r'^__lsan',
    r'^__ubsan', r'^__interceptor_', r'^___interceptor_', r'^__GI_', r'^abort', r'^raise',
    r'^gsignal', r'^__pthread_kill', r'^pthread_kill', r'^malloc', r'^calloc', r'^realloc',
    r'^free', r'^operator', r'^std::', r'^(|__)memcmp', r'^(|__)memcpy', r'^(|__)memmove',
    r'^(|__)memset', r'^(|__)strcmp', r'^(|__)strlen', r'^<null>',
    # STACK_FRAME_IGNORE_REGEXES_IF_SYMBOLIZED: these reports are symbolized.
    r'.*libc\.so', r'.*libc-.*\.so'
]))
ERROR_LINE = re.compile(r'==\d+==\s*ERROR: (\w+Sanitizer|libFuzzer): (.*)')
FRAME = re.compile(r'^\s*#(\d+)\s+0x[0-9a-fA-F]+\s+'
                   r'(?:in\s+(\S+)(?:\s+(\S+?):\d+(?::\d+)?)?|\((.*)\))')


def read(folder, name):
    try:
        with open(os.path.join(folder, name), errors='replace') as f:
            return f.read()
    except OSError:
        return ''


def exit_code(folder, flow):
    text = read(folder, flow + '.rc').strip()
    return int(text) if text else None


def crash_type_and_state(log):
    """The crash type and the top three frames ClusterFuzz would not skip."""
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = ERROR_LINE.search(line)
        if m:
            break
    else:
        return 'none', ''
    tool, what = m.groups()
    if tool == 'libFuzzer':
        kind = {'timeout': 'Timeout', 'out-of-memory': 'Out-of-memory', 'deadly signal':
                'Deadly signal', 'fuzz target exited': 'Fuzz target exited'}.get(
                    re.split(r' after| \(', what)[0], what)
    elif tool == 'LeakSanitizer':
        kind = 'Direct-leak'
    else:
        kind = re.split(r' on | at |:', what)[0].strip()
        kind = kind[:1].upper() + kind[1:]
        for later in lines[i + 1:i + 6]:
            access = re.search(r'(READ|WRITE) of size (\d+)', later)
            if access:
                kind += ' ' + ' '.join(access.groups())
                break
    frames, last = [], -1
    for line in lines[i + 1:]:
        m = FRAME.match(line)
        if not m:
            if frames and not line.strip():
                break
            continue
        fid = int(m.group(1))
        if fid < last:
            break  # the next stack (allocation, free)
        last = fid
        name, path, module = m.group(2), m.group(3), m.group(4)
        if name is None:
            frame = module
        elif name.startswith('LLVMFuzzerTestOneInput') and path:
            frame = os.path.basename(path)  # llvm_test_one_input_override
        else:
            frame = name
        if IGNORED_FRAMES.match(frame):
            continue
        frames.append(frame)
    return kind, ' / '.join(frames[:3])


def fuzz_stats(log):
    """parse_log_stats and parse_performance_features, for the fields a fuzz task records."""
    lines = log.splitlines()
    s = {'stat keys': ','.join(sorted({m.group(1) for l in lines
                                         for m in [STATS.match(l)] if m and m.group(2).isdigit()}))}
    for name, regex in [('bad_instrumentation', BAD_INSTRUMENTATION), ('crash_count', CRASH),
                        ('dict_used', DICT_USED), ('leak_count', LEAK), ('oom_count', OOM),
                        ('timeout_count', TIMEOUT), ('slow_unit_count', SLOW)]:
        s[name] = int(any(regex.match(l) for l in lines))
    s['dictionary parsing failed'] = int(any(DICT_FAILED.search(l) for l in lines))
    edges = [int(m.group(2)) for l in lines for m in [MODULES.match(l)] if m]
    s['edges_total'] = edges[-1] if edges else 0
    max_len = [m.group(1) for l in lines for m in [MAX_LEN.match(l)] if m]
    s['max_len from the log'] = max_len[0] if max_len else 'none (-max_len given)'
    inited = False
    engine_lines = 0
    for l in lines:
        if not inited:
            inited = bool(INITED.match(l))
            continue
        engine_lines += bool(LOG_LINE.match(l))
    s['log_lines_from_engine > 0'] = int(engine_lines > 0)
    s['startup_crash_count'] = int(engine_lines == 0 and not edges)
    has_corpus = any(SEED_CORPUS.match(l) for l in lines)
    s['corpus_crash_count'] = int(has_corpus and engine_lines == 0)
    testcase = [m.group(1).strip() for l in lines for m in [TESTCASE.match(l)] if m]
    s['testcase line'] = (re.sub(r'[0-9a-f]{40}', '<sha1>', os.path.basename(testcase[0]))
                          if testcase else 'none')
    s['Base64 line'] = int(any(l.startswith('Base64: ') for l in lines))
    return s


def merge_stats(log):
    for line in reversed(log.splitlines()):
        m = MERGE_STATS.match(line)
        if m:
            return int(m.group(2)), int(m.group(1))
    return None


def rc_class(rc):
    if rc is None:
        return 'not run'
    if rc == 137:
        return 'killed (timed out)'
    return '%d (%s)' % (rc, 'no crash' if rc in NONCRASH_RC or rc == 143 else 'crash')


def file_info(folder, name):
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        return None
    with open(path, 'rb') as f:
        return f.read()


def collect(folder):
    """Every compared field of one build, as (flow, field) -> value."""
    out = {}
    log = read(folder, 'build_check.log')
    edges = BUILD_EDGES.search(log)
    out[('build check', 'exit code')] = rc_class(exit_code(folder, 'build_check'))
    out[('build check', '"no interesting inputs" (BAD BUILD)')] = int(BUILD_BAD in log)
    out[('build check', 'edge count')] = edges.group(2) if edges else 'none (check skipped)'
    log = read(folder, 'startup.log')
    out[('startup check', 'exit code')] = rc_class(exit_code(folder, 'startup'))
    out[('startup check', '"Done 4 runs"')] = int('Done 4 runs' in log)
    log = read(folder, 'fuzz.log')
    out[('fuzz', 'exit code')] = rc_class(exit_code(folder, 'fuzz'))
    for field, value in fuzz_stats(log).items():
        out[('fuzz', field)] = value
    out[('fuzz', 'crash type / state')] = ' | '.join(crash_type_and_state(log))
    for flow in ['reproduce', 'reproduce_ossfuzz', 'reproduce_hang', 'minimized_repro',
                 'cleansed_repro']:
        log = read(folder, flow + '.log')
        out[(flow, 'exit code')] = rc_class(exit_code(folder, flow))
        out[(flow, 'crash type / state')] = ' | '.join(crash_type_and_state(log))
    out[('fuzz_fork', 'exit code')] = rc_class(exit_code(folder, 'fuzz_fork'))
    max_len = [m.group(1) for l in read(folder, 'fuzz_fork.log').splitlines()
               for m in [MAX_LEN.match(l)] if m]
    out[('fuzz_fork', 'max_len from the log')] = max_len[0] if max_len else 'none'
    padded = file_info(folder, 'padded-testcase') or b''
    for flow, name in [('minimize', 'minimized'), ('cleanse', 'cleansed'),
                       ('cleanse_again', 'cleansed-twice')]:
        data = file_info(folder, name)
        out[(flow, 'exit code')] = rc_class(exit_code(folder, flow))
        out[(flow, 'output written')] = 'no' if data is None else 'yes'
        if flow == 'minimize':
            out[(flow, 'smaller than its input')] = int(data is not None and len(data) < len(padded))
            out[(flow, 'size (bytes)')] = 'none' if data is None else len(data)
        elif flow == 'cleanse':
            out[(flow, 'same size, other bytes')] = int(
                data is not None and len(data) == len(padded) and data != padded)
    out[('prune', 'exit code')] = rc_class(exit_code(folder, 'prune'))
    out[('prune', 'MERGE-OUTER stats')] = 'yes' if merge_stats(read(folder, 'prune.log')) else 'no'
    kept = set()
    prune_out = os.path.join(folder, 'prune_out')
    for name in (os.listdir(prune_out) if os.path.isdir(prune_out) else []):
        with open(os.path.join(prune_out, name), 'rb') as f:
            kept.add(hashlib.sha1(f.read()).hexdigest())
    for unit in ['crashing-unit', 'hanging-unit']:
        data = file_info(os.path.join(folder, 'prune_in'), unit)
        out[('prune', unit + ' left out')] = int(
            data is not None and hashlib.sha1(data).hexdigest() not in kept)
    artifacts = os.path.join(folder, 'prune_crashes')
    out[('prune', 'artifacts written')] = ' '.join(sorted(
        re.sub(r'[0-9a-f]{40}', '<sha1>', name)
        for name in (os.listdir(artifacts) if os.path.isdir(artifacts) else []))) or 'none'
    out[('two-step merge', 'multistep marker in binary')] = int(
        read(folder, 'multistep.marker').strip() not in ('', '0'))
    steps = []
    for step in ['merge_step1', 'merge_step2']:
        out[('two-step merge', step + ' exit code')] = rc_class(exit_code(folder, step))
        steps.append(merge_stats(read(folder, step + '.log')))
        out[('two-step merge', step + ' stats')] = 'yes' if steps[-1] else 'no'
    out[('two-step merge', 'new_edges >= 0')] = int(
        all(steps) and steps[1][0] - steps[0][0] >= 0 and steps[1][1] - steps[0][1] >= 0)
    cwd = os.path.join(folder, 'cwd')
    for flow in sorted(os.listdir(cwd)) if os.path.isdir(cwd) else []:
        left = sorted(re.sub(r'[0-9a-f]{40}', '<sha1>', name)
                      for name in os.listdir(os.path.join(cwd, flow)))
        out[(flow, 'files left in its working folder')] = ' '.join(left) or 'none'
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ref, sift = collect(sys.argv[1]), collect(sys.argv[2])
    rows = [(flow, field, str(ref[(flow, field)]), str(sift.get((flow, field))))
            for flow, field in ref]
    widths = [max(len(r[i]) for r in rows + [('flow', 'field', 'libFuzzer', 'sift')])
              for i in range(4)]
    widths = [min(w, 72) for w in widths]
    line = '| ' + ' | '.join('%-' + str(w) + 's' for w in widths) + ' | %s |'
    print(line % ('flow', 'field', 'libFuzzer', 'sift', 'same'))
    print('|' + '|'.join('-' * (w + 2) for w in widths) + '|------|')
    same = 0
    for r in rows:
        ok = r[2] == r[3]
        same += ok
        print(line % (r[0], r[1], r[2][:72], r[3][:72], 'same' if ok else 'DIFF'))
    print('\n%d of %d fields the same' % (same, len(rows)))


if __name__ == '__main__':
    main()
