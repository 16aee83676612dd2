package output

// Palette is Salt's colour table (salt/utils/color.py get_colors) as
// ANSI sequences; every entry is "" when colours are off.
type Palette struct {
	Black, DarkGray, Red, LightRed, Green, LightGreen, Yellow, LightYellow string
	Blue, LightBlue, Magenta, LightMagenta, Cyan, LightCyan, LightGray     string
	White, DefaultColor, EndC                                              string
}

// Colors returns the palette, or an empty one when use is false. Each
// sequence starts with a reset, as salt/utils/textformat.py TextFormat
// builds them ("\x1b[0;32m" for green, "\x1b[0;1;33m" for light yellow,
// "\x1b[0;0m" for ENDC).
func Colors(use bool) Palette {
	if !use {
		return Palette{}
	}
	c := func(codes string) string { return "\x1b[0;" + codes + "m" }
	return Palette{
		Black: c("30"), DarkGray: c("1;30"), Red: c("31"), LightRed: c("1;31"),
		Green: c("32"), LightGreen: c("1;32"), Yellow: c("33"), LightYellow: c("1;33"),
		Blue: c("34"), LightBlue: c("1;34"), Magenta: c("35"), LightMagenta: c("1;35"),
		Cyan: c("36"), LightCyan: c("1;36"), LightGray: c("37"), White: c("1;37"),
		DefaultColor: c("39"), EndC: c("0"),
	}
}
