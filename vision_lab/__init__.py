"""The camera fallback's training lab: not part of the runtime package.

`vision_lab.fonts` draws rank glyphs and suit symbols, `vision_lab.synth`
draws card faces and photographs them (labelled pictures and dealing videos
for tests and benchmarks), `vision_lab.train` trains the index classifier that
ships in shoed/vision/data/. The daemon and `shoed.vision` never import this
package; tests, benchmarks and tools/ do.
"""
