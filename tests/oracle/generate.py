#!/usr/bin/env python3
"""Regenerates the three.js reference poses that tests/conformance.rs checks.

The references come from ../shared/tools/gltf-oracle (three.js r170, an
implementation nobody on this project wrote) evaluating the shared models at
chosen clips and times. To keep the repository small each case keeps every
joint matrix and an evenly spaced subset of each primitive's vertices (with
their indices), rounded to 7 significant digits, plus the bounding-box
diagonal of the full vertex set that errors are measured against.

usage: python3 tests/oracle/generate.py [ORACLE_DIR]
  ORACLE_DIR: a copy of gltf-oracle with `npm install --no-save three@0.170`
  done in it (default /tmp/gltf-oracle).
"""
import json, math, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.normpath(os.path.join(HERE, '..', '..', '..', 'shared', 'assets'))
VERTICES_PER_CASE = 240

# (model path under assets, clip, times). The oracle always plays a clip (clip 0
# when none is named), so rest poses are checked elsewhere, not here.
CASES = [
    ('Fox/Fox.glb', 'Survey', [0.0, 1.37, 3.0]),
    ('Fox/Fox.glb', 'Walk', [0.25, 0.9]),
    ('Fox/Fox.glb', 'Run', [0.5]),
    ('CesiumMan/CesiumMan.glb', '0', [0.0, 0.02, 0.5, 1.7, 2.5]),
    ('RiggedSimple/RiggedSimple.glb', '0', [0.01, 0.8, 1.5]),
    ('RiggedSimple/glTF/RiggedSimple.gltf', '0', [1.1]),
    ('RiggedFigure/RiggedFigure.glb', '0', [0.3, 1.0]),
    ('SimpleSkin/SimpleSkin.gltf', '0', [0.7, 3.3]),
    ('SimpleSkin/bevy-variant/SimpleSkin.gltf', '0', [0.7, 3.3]),
    ('SimpleMorph/glTF/SimpleMorph.gltf', '0', [1.3, 3.5]),
    ('AnimatedMorphCube/glTF-Binary/AnimatedMorphCube.glb', '0', [0.9, 2.2]),
    ('AnimatedMorphSphere/glTF/AnimatedMorphSphere.gltf', '0', [1.5, 4.4]),
    ('MorphStressTest/glTF/MorphStressTest.gltf', 'Individuals', [0.01, 2.5]),
    ('MorphStressTest/glTF/MorphStressTest.gltf', 'TheWave', [1.0]),
    ('MorphStressTest/bevy-reexport-embedded/MorphStressTest.gltf', 'Pulse', [3.0]),
    ('RobotExpressive/RobotExpressive.glb', 'Walking', [0.5]),
    ('RobotExpressive/RobotExpressive.glb', 'Dance', [1.9]),
    ('RobotExpressive/RobotExpressive.glb', 'Yes', [0.8]),
    ('RobotExpressive/RobotExpressive.glb', 'Punch', [0.4]),
] + [
    ('InterpolationTest/InterpolationTest.glb', f'{kind} {path}', [0.3, 1.25, 1.8])
    for kind in ('Step', 'Linear', 'CubicSpline') for path in ('Translation', 'Rotation', 'Scale')
] + [
    ('Fox/Fox.glb', 'Run', [-0.3]),
    ('Wizard/Wizard.glb', 'Walk', [0.6]),
    ('Wizard/Wizard.glb', 'Spell1', [0.9]),
    ('Girl/girl.glb', 'IdleTrack', [0.01, 1.2]),
    ('Girl/girl.glb', 'RunTrack', [0.55]),
    ('Greenman/greenman.glb', '2_move', [0.7]),
    ('Greenman/greenman.glb', '3_attack', [0.05]),
]


def round_sig(x, digits=7):
    return 0.0 if x == 0 else float(f'{x:.{digits}g}')


def run_oracle(oracle_dir, model, clip, time):
    args = ['node', os.path.join(oracle_dir, 'three_oracle.mjs'), os.path.join(ASSETS, model),
            '--time', str(time), '--clip', clip]
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=oracle_dir).stdout
    return json.loads(out)


def reduce(doc, model, clip, time):
    pts = [p['positions'][i:i + 3] for p in doc['primitives'] for i in range(0, len(p['positions']), 3)]
    pts += [j['world'][12:15] for j in doc['joints']]
    lo = [min(p[i] for p in pts) for i in range(3)]
    hi = [max(p[i] for p in pts) for i in range(3)]
    total = sum(len(p['positions']) // 3 for p in doc['primitives']) or 1
    prims = []
    for p in doc['primitives']:
        n = len(p['positions']) // 3
        keep = max(1, min(n, round(VERTICES_PER_CASE * n / total)))
        idx = sorted({round(k * (n - 1) / max(keep - 1, 1)) for k in range(keep)})
        prims.append({'mesh': p['mesh'], 'primitive': p['primitive'], 'node': p['node'],
                      'skinned': p['skinned'], 'vertex_count': n, 'indices': idx,
                      'positions': [round_sig(p['positions'][3 * i + c]) for i in idx for c in range(3)]})
    return {'model': model, 'clip': clip, 'time': time, 'scale': math.dist(lo, hi) or 1.0,
            'joints': [{'node': j['node'], 'world': [round_sig(v) for v in j['world']]} for j in doc['joints']],
            'primitives': prims}


def main():
    oracle_dir = sys.argv[1] if len(sys.argv) > 1 else '/tmp/gltf-oracle'
    cases = []
    for model, clip, times in CASES:
        for t in times:
            cases.append(reduce(run_oracle(oracle_dir, model, clip, t), model, clip, t))
    with open(os.path.join(HERE, 'three_r170.json'), 'w') as f:
        json.dump({'generator': 'three.js r170 via shared/tools/gltf-oracle; tests/oracle/generate.py',
                   'cases': cases}, f, separators=(',', ':'))
        f.write('\n')
    print(f'{len(cases)} cases written')


if __name__ == '__main__':
    main()
