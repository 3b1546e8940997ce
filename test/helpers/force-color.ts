// Imported first by colour tests: the colour library reads this once, when it loads.
process.env['FORCE_COLOR'] = '1';
