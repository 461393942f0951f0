/**
 * Word list for wallet short codes (spec section 2, "Wallet identifiers": three unique English
 * words separated by spaces). Common, lower-case, ASCII-only English words of 3 to 8 letters,
 * no duplicates: 346 words, so about 41 million ordered three-word codes.
 */
export const SHORT_CODE_WORDS: readonly string[] = Object.freeze(`
able acid actor adult agent alarm album alert alley amber angle ankle apple april arena argue
arrow atlas audio aunt autumn avoid award baby bacon badge baker balance bamboo banana banner
barrel basic basket beach beard beauty before begin bench berry bicycle bird blade blanket blossom
board boat body bonus book border bottle bottom brain branch brave bread brick bridge bright
broken brother bubble bucket budget buffalo burger butter button cabin cable cactus camera camp
canal candle canvas carbon cargo carpet carrot castle catalog cattle ceiling cement center cereal
chair chalk change chapter cherry chicken chimney circle citizen civil clay clever cliff climb
clinic clock cloud clover coach coast coconut coffee collect color comet comfort copper coral
cotton country couple cousin cradle crane crater crayon credit crystal cube culture cupboard
curtain cushion dance danger daring dawn debate decade deer delta denim desert desk detail
diamond diary dinner doctor dolphin donkey door dragon drama dream drift drum eagle early earth
echo eclipse editor eight elbow elder engine enjoy equal escape evening exact exotic fabric
falcon family fancy farm feather fence festival fiber field figure filter finger flame flavor
fleet flower fluid focus forest fossil fountain fox frame fresh friend frost fruit galaxy garden
garlic gentle giant ginger giraffe glass globe glove goat golden gorilla grain grape gravity
green guitar habit hammer harbor harvest hazel health heart helmet hero hidden hill hobby honey
horizon horse hotel humble hunter island ivory jacket jaguar jelly jewel journey jungle kettle
kidney kitchen kite kiwi ladder lake lamp lantern laptop lemon leopard letter library limit lion
liquid lizard lobster lucky lunar magnet mango maple marble market meadow melody metal middle
mirror monkey moon motor mountain muffin museum music napkin narrow nature needle nephew noble
noodle north novel number oasis ocean olive onion orange orbit orchard organ otter oxygen oyster
paddle palace panda paper parade parrot pepper piano pickle pilot pioneer planet plastic pocket
poem polar pond potato powder prairie prism puzzle pyramid quartz rabbit radar radio rainbow
raven record river robot rocket rose royal rubber saddle salmon sample sandal satin scarf school
`.trim().split(/\s+/));
