; nmi: a small NMI-driven demo, the kind of frame loop a game has.
;
; The main loop waits for the NMI handler's flag, reads joypad 1 (auto-joypad read), and builds
; the next frame in WRAM: a ball sprite the d-pad moves, eight satellites circling it (positions
; from a sine table scaled with the hardware multiplier), the frame counter, the joypad, a product
; and a quotient (hardware divider) as hex digits in a tilemap buffer, and animated colours in a
; palette buffer. The NMI handler copies the three buffers to VRAM, CGRAM and OAM with general DMA,
; counts the frame and sets the flag. HDMA channel 7 writes CGRAM colour 0 on every eighth
; scanline, a backdrop gradient. At every frame boundary (line 225) the CPU sits in WAI.
;
; Start-up writes two things to VRAM the other way round: the title row through $2118 alone with
; VMAIN's increment-after-low-byte setting, and a strip of 16 tiles through VMAIN's address
; remapping (8-bit rotation).
;
; Joypad 1: d-pad moves the ball (B held: twice as fast), A cycles its palette, X reverses the
; satellites, L and R (held) shrink and grow their orbit, Select (held) shows four of them instead
; of eight, Start puts the ball back in the middle, Y (held) freezes the colour animation.
;
; VRAM (word addresses): BG1 tiles $0000 (font: tile 0 blank, 1-10 '0'-'9', 11-36 'A'-'Z';
; the remapped strip: tiles 48-63), BG1 tilemap $1000 (32x32), sprite tiles $2000.
; WRAM: direct page variables $0000, OAM buffer $0200, palette buffer $0600, tilemap buffer
; $0800, stack $1FFF.

.include "common.inc"

; ---- WRAM ----
OAMBUF  = $0200         ; 544 bytes: 128 sprites of 4 bytes, then 32 bytes of high bits
PALBUF  = $0600         ; 512 bytes: 256 colours
MAPBUF  = $0800         ; 2048 bytes: BG1's 32x32 tilemap

; Direct page.
frame      = $00        ; word: NMIs taken
nmi_flag   = $02        ; byte: set by the NMI handler, cleared by the main loop
video_on   = $03        ; byte: the NMI handler copies the buffers only once this is set
joy        = $04        ; word: joypad 1 this frame ($4219:$4218)
joy_prev   = $06        ; word: last frame's
pressed    = $08        ; word: buttons that went down this frame
ball_x     = $0A        ; byte
ball_y     = $0B        ; byte
ball_pal   = $0C        ; byte: 0-2
angle      = $0D        ; byte: the satellites' angle, 64 steps a turn
dir        = $0E        ; byte: +1 or -1 a frame
radius     = $0F        ; byte: 8-56
sat_count  = $10        ; byte: 8 or 4
tmp        = $12        ; word
sat_i      = $14        ; byte
sat_angle  = $15        ; byte
prod       = $16        ; word: the last product shown
quot       = $18        ; word
rem        = $1A        ; word
off        = $1C        ; byte: scratch
sign       = $1D        ; byte: scratch

; Joypad bits as $4219:$4218 hold them.
PAD_B      = $8000
PAD_Y      = $4000
PAD_SELECT = $2000
PAD_START  = $1000
PAD_UP     = $0800
PAD_DOWN   = $0400
PAD_LEFT   = $0200
PAD_RIGHT  = $0100
PAD_A      = $0080
PAD_X      = $0040
PAD_L      = $0020
PAD_R      = $0010

        ROM_HEADER "RPT NMI DEMO"
        ROM_VECTORS just_rti, just_rti, just_rti, nmi, just_rti, just_rti, just_rti, just_rti, reset, just_rti

; Tile numbers of the font, so that strings are tilemap entries (after the header, whose title
; is ASCII).
; (The codes are numbers: once '0' is mapped, '0' + 1 would go through the map too.)
.charmap $20, 0                 ; ' '
.repeat 10, i
        .charmap $30 + i, 1 + i ; '0'-'9'
.endrepeat
.repeat 26, i
        .charmap $41 + i, 11 + i ; 'A'-'Z'
.endrepeat

MAP_TITLE  = $1000 + 2 * 32 + 10        ; VRAM word of the title
MAP_STRIP  = $1000 + 24 * 32 + 8        ; VRAM word of the remapped strip's row
STRIP_VRAM = $0300                      ; VRAM word of tile 48
DYN_FIRST  = 4                          ; the rows the NMI handler copies: 4 ...
DYN_ROWS   = 16                         ; ... to 19

; Tilemap buffer offsets (bytes: row * 64 + column * 2) of the labels and the values.
POS_FRAME    = 5 * 64 + 12 * 2
POS_JOY      = 7 * 64 + 12 * 2
POS_MUL      = 9 * 64 + 12 * 2
POS_DIV      = 11 * 64 + 12 * 2
POS_REM      = 11 * 64 + 20 * 2
POS_BALL_X   = 13 * 64 + 12 * 2
POS_BALL_Y   = 13 * 64 + 17 * 2
POS_RADIUS   = 15 * 64 + 12 * 2
POS_ANGLE    = 15 * 64 + 17 * 2
LABEL_COLUMN = 4 * 2

.segment "CODE"

reset:
        RESET_CPU $1FFF, $0000
        CLEAR_MEMORY zero_byte, init_wait
        jsr load_video
        jsr init_buffers
        ; The game's state.
        lda #120
        sta ball_x
        lda #150
        sta ball_y
        lda #1
        sta dir
        lda #24
        sta radius
        lda #8
        sta sat_count
        rep #$20
        .a16
        jsr build_frame
        sep #$20
        .a8
        ; Turn the picture on at the start of a vertical blank.
        jsr init_wait
        lda #1
        sta video_on
        lda #$80                ; HDMA channel 7
        sta HDMAEN
        lda #$0F
        sta INIDISP
        lda #$81                ; NMI and the auto-joypad read
        sta NMITIMEN
        rep #$20
        .a16

; The frame loop: wait for the NMI, read the joypad, build the next frame.
main_loop:
        .a16
        .i16
@wait:
        wai
        sep #$20
        .a8
        lda nmi_flag
        beq @wait
        stz nmi_flag
@joypad_busy:
        lda HVBJOY              ; the auto-joypad read runs for a few lines after the NMI
        and #$01
        bne @joypad_busy
        rep #$20
        .a16
        lda joy
        sta joy_prev
        lda JOY1L
        sta joy
        lda joy_prev
        eor #$FFFF
        and joy
        sta pressed
        jsr update
        jsr build_frame
        bra main_loop

; Start-up's frame wait (M=1, X=0): returns after the next NMI.
init_wait:
        .a8
        rep #$20
        .a16
        lda frame
@wait:
        wai
        cmp frame
        beq @wait
        sep #$20
        .a8
        rts

; The NMI: copies the buffers (once video_on is set), counts the frame, sets the flag.
nmi:
        rep #$30
        .a16
        .i16
        pha
        phx
        phy
        phb
        phd
        lda #$0000
        tcd
        pea $0000
        plb
        plb
        sep #$20
        .a8
        lda video_on
        beq @count
        ; Channel 0: tilemap rows DYN_FIRST.. to VRAM, a word at a time.
        lda #$80
        sta VMAIN
        ldx #$1000 + DYN_FIRST * 32
        stx VMADDL
        lda #$01                ; increment, two B-bus registers
        sta DMAP
        lda #<VMDATAL
        sta BBAD
        ldx #MAPBUF + DYN_FIRST * 64
        stx A1TL
        stz A1B
        ldx #DYN_ROWS * 64
        stx DASL
        ; Channel 1: colours 1-255 to CGRAM (colour 0 belongs to the HDMA gradient).
        lda #1
        sta CGADD
        stz DMAP + $10
        lda #<CGDATA
        sta BBAD + $10
        ldx #PALBUF + 2
        stx A1TL + $10
        stz A1B + $10
        ldx #510
        stx DASL + $10
        ; Channel 2: all of OAM.
        stz OAMADDL
        stz OAMADDH
        stz DMAP + $20
        lda #<OAMDATA
        sta BBAD + $20
        ldx #OAMBUF
        stx A1TL + $20
        stz A1B + $20
        ldx #544
        stx DASL + $20
        lda #$07
        sta MDMAEN
@count:
        rep #$20
        .a16
        inc frame
        sep #$20
        .a8
        lda #1
        sta nmi_flag
        rep #$30
        .a16
        pld
        plb
        ply
        plx
        pla
        rti

just_rti:
        rti

; ---- Start-up ----

; Tiles, the static tilemap rows and the video registers. M=1, X=0, forced blank.
load_video:
        .a8
        .i16
        lda #$80
        sta VMAIN
        ; The font at word $0000 and the sprite tiles at word $2000, by DMA from ROM.
        ldx #$0000
        stx VMADDL
        lda #$01
        sta DMAP
        lda #<VMDATAL
        sta BBAD
        ldx #.loword(font)
        stx A1TL
        lda #^font
        sta A1B
        ldx #font_end - font
        stx DASL
        lda #$01
        sta MDMAEN
        ldx #$2000
        stx VMADDL
        ldx #.loword(sprite_tiles)
        stx A1TL
        lda #^sprite_tiles
        sta A1B
        ldx #sprite_tiles_end - sprite_tiles
        stx DASL
        lda #$01
        sta MDMAEN
        ; The title: low bytes only, VMAIN incrementing after each $2118 write. The high bytes
        ; (palette, priority, flips) stay as the clearing left them.
        stz VMAIN
        ldx #MAP_TITLE
        stx VMADDL
        ldx #0
@title:
        lda title,x
        sta VMDATAL
        inx
        cpx #title_end - title
        bne @title
        ; The strip through remapping mode 1: logical word (row * 32 + column) of the 256-word
        ; block at STRIP_VRAM lands at (column * 8 + row), so writing it in logical order fills
        ; tile (column / 2)'s row `row`, planes 0-1 for even columns and 2-3 for odd ones. Tile t
        ; shows a staircase: its rows from 7 - t/2 down are colour 3.
        lda #$84                ; increment after $2119, remap mode 1
        sta VMAIN
        ldx #STRIP_VRAM
        stx VMADDL
        ldy #0                  ; row
@strip_row:
        ldx #0                  ; column
@strip_column:
        rep #$20
        .a16
        txa
        lsr a                   ; tile number within the strip
        lsr a                   ; its pair of tiles
        eor #$0007              ; 7 - t/2
        sta tmp
        lda #$0000
        cpy tmp
        bcc @strip_word         ; above the staircase
        txa
        lsr a
        lda #$0000
        bcs @strip_word         ; odd column: planes 2-3 stay 0
        lda #$FFFF
@strip_word:
        sta VMDATAL
        sep #$20
        .a8
        inx
        cpx #32
        bne @strip_column
        iny
        cpy #8
        bne @strip_row
        ; The strip's row in the tilemap: tiles 48-63.
        lda #$80
        sta VMAIN
        ldx #MAP_STRIP
        stx VMADDL
        ldx #48
@strip_map:
        stx VMDATAL
        inx
        cpx #64
        bne @strip_map
        ; Mode 1, BG1 tiles at 0 and tilemap at $1000, sprites 8x8 with tiles at $2000.
        lda #$01
        sta BGMODE
        lda #$10
        sta BG1SC
        stz BG12NBA
        lda #$01
        sta OBJSEL
        lda #$11                ; BG1 and sprites
        sta TM
        stz TS
        stz CGWSEL
        stz CGADSUB
        stz SETINI
        stz BG1HOFS
        stz BG1HOFS
        lda #$FF                ; -1: the first visible line shows the tilemap's line 0
        sta BG1VOFS
        sta BG1VOFS
        ; HDMA channel 7: four bytes a line, to $2121 twice then $2122 twice.
        lda #$03
        sta DMAP + $70
        lda #<CGADD
        sta BBAD + $70
        ldx #.loword(gradient)
        stx A1TL + $70
        lda #^gradient
        sta A1B + $70
        rts

; The buffers' first contents: every sprite off screen, the palettes, the labels. M=1, X=0.
init_buffers:
        .a8
        .i16
        ldx #0
@hide:
        lda #$00
        sta OAMBUF,x            ; X
        lda #$E0
        sta OAMBUF+1,x          ; Y below the picture
        inx
        inx
        inx
        inx
        cpx #512
        bne @hide
        ; The high table is all 0 already: X bit 8 clear, small size.
        rep #$20
        .a16
        ldx #0
@palette:
        lda palette,x
        sta PALBUF,x
        inx
        inx
        cpx #palette_end - palette
        bne @palette
        ldx #0
@sprite_palette:
        lda sprite_palettes,x
        sta PALBUF + 256,x      ; colours 128 on: the sprite palettes
        inx
        inx
        cpx #sprite_palettes_end - sprite_palettes
        bne @sprite_palette
        ldy #0
@label:
        lda labels,y            ; buffer offset, then the text's address
        beq @labels_done
        tax
        lda labels+2,y
        jsr put_text
        iny
        iny
        iny
        iny
        bra @label
@labels_done:
        sep #$20
        .a8
        rts

; Writes the zero-terminated text at A (bank $00) into the tilemap buffer at byte offset X.
; .a16 .i16; keeps Y.
put_text:
        .a16
        phy
        sta tmp
        ldy #0
@char:
        lda (tmp),y
        and #$00FF
        beq @end
        sta MAPBUF,x
        inx
        inx
        iny
        bra @char
@end:
        ply
        rts

; ---- The frame ----

; Moves the ball and the satellites by the joypad. .a16 .i16
update:
        .a16
        .i16
        sep #$20
        .a8
        ; Speed: 1 pixel a frame, 2 with B held.
        lda #1
        bit joy+1
        bpl @speed
        lda #2
@speed:
        sta tmp
        lda joy+1
        bit #>PAD_RIGHT
        beq @not_right
        lda ball_x
        clc
        adc tmp
        sta ball_x
        lda joy+1
@not_right:
        bit #>PAD_LEFT
        beq @not_left
        lda ball_x
        sec
        sbc tmp
        sta ball_x
        lda joy+1
@not_left:
        bit #>PAD_DOWN
        beq @not_down
        lda ball_y
        clc
        adc tmp
        cmp #216
        bcc :+
        lda #216
:       sta ball_y
        lda joy+1
@not_down:
        bit #>PAD_UP
        beq @not_up
        lda ball_y
        sec
        sbc tmp
        bcs :+
        lda #0
:       sta ball_y
@not_up:
        ; Start: back to the middle.
        lda pressed+1
        bit #>PAD_START
        beq @not_start
        lda #124
        sta ball_x
        lda #108
        sta ball_y
@not_start:
        ; A: the next palette; X: the other way round.
        lda pressed
        bit #<PAD_A
        beq @not_a
        lda ball_pal
        inc a
        cmp #3
        bcc :+
        lda #0
:       sta ball_pal
        lda pressed
@not_a:
        bit #<PAD_X
        beq @not_x
        lda dir
        eor #$FF
        inc a
        sta dir
@not_x:
        ; L and R: the orbit's radius, 8 to 56.
        lda joy
        bit #<PAD_L
        beq @not_l
        lda radius
        cmp #9
        bcc @not_l
        dec radius
@not_l:
        lda joy
        bit #<PAD_R
        beq @not_r
        lda radius
        cmp #56
        bcs @not_r
        inc radius
@not_r:
        ; Select: four satellites.
        lda joy+1
        and #>PAD_SELECT
        beq @eight
        lda #4
        bra @count
@eight:
        lda #8
@count:
        sta sat_count
        lda angle
        clc
        adc dir
        and #63
        sta angle
        rep #$20
        .a16
        rts

; Writes this frame's sprites, palette and text into the buffers. .a16 .i16
build_frame:
        .a16
        .i16
        sep #$20
        .a8
        ; Sprite 0: the ball.
        lda ball_x
        sta OAMBUF
        lda ball_y
        sta OAMBUF+1
        lda #1
        sta OAMBUF+2
        lda ball_pal
        asl a
        ora #$30                ; priority 3
        sta OAMBUF+3
        ; Sprites 1-8: the satellites, at angle + 8i. The offset is |sin| * radius / 128, the
        ; product from the hardware multiplier.
        stz sat_i
@satellite:
        lda sat_i
        asl a
        asl a
        asl a
        clc
        adc angle
        sta sat_angle
        ; x: the cosine (sine a quarter turn on).
        clc
        adc #16
        jsr scaled_sine
        clc
        adc ball_x
        pha
        ; y: the sine.
        lda sat_angle
        jsr scaled_sine
        clc
        adc ball_y
        pha
        rep #$20                ; (TAX moves all 16 bits of A)
        .a16
        lda sat_i
        and #$0007
        asl a
        asl a
        tax
        sep #$20
        .a8
        pla
        sta OAMBUF+5,x          ; Y
        pla
        sta OAMBUF+4,x          ; X
        lda #2
        sta OAMBUF+6,x
        lda #$34                ; priority 3, palette 2
        sta OAMBUF+7,x
        lda sat_i
        cmp sat_count
        bcc :+
        lda #$E0                ; beyond sat_count: below the picture
        sta OAMBUF+5,x
:       inc sat_i
        lda sat_i
        cmp #8
        bne @satellite
        ; The multiplier on its own: the frame's low byte times 37.
        lda frame
        sta WRMPYA
        lda #37
        sta WRMPYB
        nop                     ; the product is ready 8 cycles after the WRMPYB write
        nop
        nop
        nop
        ldx RDMPYL
        stx prod
        ; The divider: the frame counter over 7.
        ldx frame
        stx WRDIVL
        lda #7
        sta WRDIVB
        nop                     ; the quotient is ready 16 cycles after the WRDIVB write
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        ldx RDDIVL
        stx quot
        ldx RDMPYL
        stx rem
        rep #$20
        .a16
        ; Colour 1 (text) walks a triangle wave from cyan to white and back.
        lda joy
        and #PAD_Y
        bne @palette_done
        lda frame
        and #63
        cmp #32
        bcc :+
        eor #63
:       sta tmp                 ; red 0-31
        lda #31
        sec
        sbc tmp
        lsr a
        clc
        adc #16                 ; green 16-31
        asl a
        asl a
        asl a
        asl a
        asl a
        ora tmp
        ora #31 << 10           ; blue 31
        sta PALBUF + 2
        ; The strip's colour 3 goes round the other way.
        lda frame
        lsr a
        and #31
        sta tmp
        asl a
        asl a
        asl a
        asl a
        asl a
        asl a
        asl a
        asl a
        asl a
        asl a
        ora tmp
        ora #$00E0              ; some green
        sta PALBUF + 6
@palette_done:
        ; The numbers.
        lda frame
        ldx #POS_FRAME
        jsr put_hex16
        lda joy
        ldx #POS_JOY
        jsr put_hex16
        lda prod
        ldx #POS_MUL
        jsr put_hex16
        lda quot
        ldx #POS_DIV
        jsr put_hex16
        lda rem
        ldx #POS_REM
        jsr put_hex8
        lda ball_x
        ldx #POS_BALL_X
        jsr put_hex8
        lda ball_y
        ldx #POS_BALL_Y
        jsr put_hex8
        lda radius
        ldx #POS_RADIUS
        jsr put_hex8
        lda angle
        ldx #POS_ANGLE
        jsr put_hex8
        rts

; A = angle (0-63, M=1). Returns sin(angle) * radius / 128 as a signed byte in A.
scaled_sine:
        .a8
        rep #$20                ; TAX moves all 16 bits of A
        .a16
        and #$003F
        tax
        lda sine_quarter_index,x        ; the quarter-table row, sign in bit 7
        sta sign
        and #$001F
        tax
        sep #$20
        .a8
        lda sine_quarter,x
        sta WRMPYA
        lda radius
        sta WRMPYB
        nop                     ; 8 cycles for the product
        nop
        nop
        nop
        rep #$20
        .a16
        lda RDMPYL
        asl a                   ; / 128: the high byte of product * 2
        xba
        sep #$20
        .a8
        bit sign
        bpl @positive
        eor #$FF
        inc a
@positive:
        rts

; Writes A (16 bits) as four hex digits at buffer offset X. .a16 .i16
put_hex16:
        .a16
        pha
        xba
        jsr put_hex8
        pla
        inx
        inx
        inx
        inx
        ; fall through: the low byte

; Writes A's low byte as two hex digits at buffer offset X (X is kept). .a16 .i16
put_hex8:
        .a16
        pha
        and #$00F0
        lsr a
        lsr a
        lsr a
        lsr a
        inc a                   ; digit d is tile d + 1 ('0'-'9' then 'A'-'F')
        sta MAPBUF,x
        pla
        pha
        and #$000F
        inc a
        sta MAPBUF+2,x
        pla
        rts

; ---- Data ----

.segment "RODATA"

zero_byte:
        .byte 0

title:
        .byte "RPT NMI DEMO"
title_end:

; Label texts: buffer offset, address; 0 ends the list.
labels:
        .word 5 * 64 + LABEL_COLUMN, .loword(txt_frame)
        .word 7 * 64 + LABEL_COLUMN, .loword(txt_joy)
        .word 9 * 64 + LABEL_COLUMN, .loword(txt_mul)
        .word 11 * 64 + LABEL_COLUMN, .loword(txt_div)
        .word 11 * 64 + 17 * 2, .loword(txt_rem)
        .word 13 * 64 + LABEL_COLUMN, .loword(txt_pos)
        .word 15 * 64 + LABEL_COLUMN, .loword(txt_orbit)
        .word 0
txt_frame:  .byte "FRAME", 0
txt_joy:    .byte "JOYPAD", 0
txt_mul:    .byte "MUL", 0
txt_div:    .byte "DIV", 0
txt_rem:    .byte "R", 0
txt_pos:    .byte "BALL", 0
txt_orbit:  .byte "ORBIT", 0

; sin(2 pi i / 64) * 127 for i = 0-16.
sine_quarter:
        .byte 0, 12, 25, 37, 49, 60, 71, 81, 90, 98, 106, 112, 117, 122, 125, 126, 127

; For each of the 64 angles: the row of sine_quarter (bits 0-4) and the sign (bit 7).
sine_quarter_index:
        .repeat 64, i
            .if i < 16
                .byte i
            .elseif i < 32
                .byte 32 - i
            .elseif i < 48
                .byte $80 | (i - 32)
            .else
                .byte $80 | (64 - i)
            .endif
        .endrepeat

; BG palette 0: colour 0 (the HDMA gradient's), text, its shadow, the strip.
palette:
        .word $0000, $7FFF, $2820, $03E0
palette_end:

; Sprite palettes 0-2 (CGRAM 128-175): the ball's three colourings and the satellites'.
sprite_palettes:
        .word $0000, $001F, $00BF, $7FFF, $0000, $0000, $0000, $0000
        .word $0000, $0000, $0000, $0000, $0000, $0000, $0000, $0000
        .word $0000, $7C00, $7D4A, $7FFF, $0000, $0000, $0000, $0000
        .word $0000, $0000, $0000, $0000, $0000, $0000, $0000, $0000
        .word $0000, $03E0, $1BF6, $7FFF, $0000, $0000, $0000, $0000
        .word $0000, $0000, $0000, $0000, $0000, $0000, $0000, $0000
sprite_palettes_end:

; The backdrop: 28 bands of 8 lines from deep blue to violet (HDMA mode 3, direct).
gradient:
        .repeat 28, i
            .byte 8
            .byte 0, 0
            .word (i / 2) | ((i / 4) << 5) | ((4 + i) << 10)
        .endrepeat
        .byte 0

; Font and sprite tiles, 4bpp. A glyph row is 5 pixels (columns 1-5): '#' is colour 1, and a
; drop shadow one pixel right and down is colour 2 (3 where it meets the glyph).
.macro GLYPH r0, r1, r2, r3, r4, r5, r6
        _above .set 0
        GLYPH_LINE r0
        GLYPH_LINE r1
        GLYPH_LINE r2
        GLYPH_LINE r3
        GLYPH_LINE r4
        GLYPH_LINE r5
        GLYPH_LINE r6
        .byte 0, _above >> 1
        .res 16, 0              ; planes 2 and 3
.endmacro

; One glyph row: plane 0 is the row, plane 1 the row above shifted right (the shadow).
.macro GLYPH_LINE str
        _row .set 0
        .repeat 5, i
            .if .strat(str, i) = '#'
                _row .set _row | ($40 >> i)
            .endif
        .endrepeat
        .byte _row, _above >> 1
        _above .set _row
.endmacro

; A sprite tile from 8 rows of 8 pixels: '.' colour 0 (transparent), 'a' 1, 'b' 2, 'c' 3.
.macro SPRITE r0, r1, r2, r3, r4, r5, r6, r7
        SPRITE_LINE r0
        SPRITE_LINE r1
        SPRITE_LINE r2
        SPRITE_LINE r3
        SPRITE_LINE r4
        SPRITE_LINE r5
        SPRITE_LINE r6
        SPRITE_LINE r7
        .res 16, 0              ; planes 2 and 3
.endmacro

.macro SPRITE_LINE str
        _p0 .set 0
        _p1 .set 0
        .repeat 8, i
            .if .strat(str, i) = 'a' || .strat(str, i) = 'c'
                _p0 .set _p0 | ($80 >> i)
            .endif
            .if .strat(str, i) = 'b' || .strat(str, i) = 'c'
                _p1 .set _p1 | ($80 >> i)
            .endif
        .endrepeat
        .byte _p0, _p1
.endmacro

.segment "BANK1"

font:
        .res 32, 0              ; tile 0: blank
        GLYPH ".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."   ; 0
        GLYPH "..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."   ; 1
        GLYPH ".###.", "#...#", "....#", "..##.", ".#...", "#....", "#####"   ; 2
        GLYPH "#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."   ; 3
        GLYPH "...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."   ; 4
        GLYPH "#####", "#....", "####.", "....#", "....#", "#...#", ".###."   ; 5
        GLYPH "..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."   ; 6
        GLYPH "#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."   ; 7
        GLYPH ".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."   ; 8
        GLYPH ".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."   ; 9
        GLYPH ".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"   ; A
        GLYPH "####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."   ; B
        GLYPH ".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."   ; C
        GLYPH "###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."   ; D
        GLYPH "#####", "#....", "#....", "####.", "#....", "#....", "#####"   ; E
        GLYPH "#####", "#....", "#....", "####.", "#....", "#....", "#...."   ; F
        GLYPH ".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"   ; G
        GLYPH "#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"   ; H
        GLYPH ".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."   ; I
        GLYPH "..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."   ; J
        GLYPH "#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"   ; K
        GLYPH "#....", "#....", "#....", "#....", "#....", "#....", "#####"   ; L
        GLYPH "#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"   ; M
        GLYPH "#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"   ; N
        GLYPH ".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."   ; O
        GLYPH "####.", "#...#", "#...#", "####.", "#....", "#....", "#...."   ; P
        GLYPH ".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"   ; Q
        GLYPH "####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"   ; R
        GLYPH ".####", "#....", "#....", ".###.", "....#", "....#", "####."   ; S
        GLYPH "#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."   ; T
        GLYPH "#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."   ; U
        GLYPH "#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."   ; V
        GLYPH "#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."   ; W
        GLYPH "#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"   ; X
        GLYPH "#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."   ; Y
        GLYPH "#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"   ; Z
font_end:

sprite_tiles:
        .res 32, 0              ; tile 0: blank
        SPRITE "..cccc..", ".caaaac.", "caabbaac", "cabbbbac", "cabbbbac", "caabbaac", ".caaaac.", "..cccc.."   ; 1: ball
        SPRITE "...c....", "..cac...", "ccabacc.", "cabbbac.", ".cabac..", "cac.cac.", "c.....c.", "........"   ; 2: star
sprite_tiles_end:
