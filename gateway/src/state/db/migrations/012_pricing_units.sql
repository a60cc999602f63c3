-- Per-unit prices of a pricing override (images, audio and video seconds, characters, pages, search units):
-- {"image": 0.04, "image_variants": {"hd/1024x1792": 0.12}, "audio_input_second": 0.0001, ...}, USD per unit.
-- NULL when the override prices tokens only.
ALTER TABLE pricing_overrides ADD COLUMN unit_prices jsonb;
