"""conv3d.explain: the kernel choice and why, from Python, for any target
without a GPU (the C API's conv3d_explain): text as conv3d-run --explain
prints it, a dict with json=True, Engine.compile's options by keyword, and
errors as Conv3dError."""
import conv3d

# C = 16 under an sm90 target: both sm90 mainloops refuse, sm80 runs it.
spec = conv3d.Spec.from_shapes((1, 4, 16, 16, 16), (3, 3, 3, 16, 384),
                               padding=(1,) * 6, filter_layout="fqrsc")
text = conv3d.explain(spec, target="sm90")
print(text.splitlines()[3])
print([line.strip() for line in text.splitlines() if "refused" in line][1])

report = conv3d.explain(spec, target="sm90", json=True)
conv = report["convolutions"][0]
print("json:", report["target"], conv["family"], conv["prediction"],
      [(f["family"], f["verdict"]) for f in conv["families"]])

# Engine.compile's options by keyword, dashes as underscores.
wide = conv3d.Spec.from_shapes((1, 8, 32, 32, 128), (3, 3, 3, 128, 128),
                               padding=(2, 0, 1, 1, 1, 1), filter_layout="fqrsc")
report = conv3d.explain(wide, target="sm90", qslice="none", selection="heuristic", json=True)
print("qslice=none:", report["options"], report["compiled_configs"])

for bad in (dict(target="sm70"), dict(target="cpu", qslice="halves")):
    try:
        conv3d.explain(spec, **bad)
    except conv3d.Conv3dError as error:
        print("Conv3dError:", error)
print("EXPLAIN-OK")
