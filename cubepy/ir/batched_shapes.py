"""The method templates of batched dataclasses for common shapes and those of
cubepy's own classes (see cubepy/ir/batched_dataclass.py), compiled like any
module. Written by batched_dataclass.write_shipped_shapes(): do not edit."""
SHAPES = [('__eq__', 0), ('__eq__', 1), ('__eq__', 10), ('__eq__', 11), ('__eq__', 12), ('__eq__', 13), ('__eq__', 19), ('__eq__', 2), ('__eq__', 26), ('__eq__', 3), ('__eq__', 4), ('__eq__', 5), ('__eq__', 6), ('__eq__', 7), ('__eq__', 8), ('__eq__', 9), ('__hash__', 0), ('__hash__', 1), ('__hash__', 10), ('__hash__', 11), ('__hash__', 12), ('__hash__', 2), ('__hash__', 3), ('__hash__', 4), ('__hash__', 5), ('__hash__', 6), ('__hash__', 7), ('__hash__', 8), ('__hash__', 9), ('__init__', 0, 0, False), ('__init__', 0, 0, True), ('__init__', 0, 1, False), ('__init__', 0, 10, False), ('__init__', 0, 11, False), ('__init__', 0, 12, False), ('__init__', 0, 2, False), ('__init__', 0, 3, False), ('__init__', 0, 4, False), ('__init__', 0, 5, False), ('__init__', 0, 6, False), ('__init__', 0, 7, False), ('__init__', 0, 8, False), ('__init__', 0, 9, False), ('__init__', 1, 0, False), ('__init__', 1, 0, True), ('__init__', 10, 0, False), ('__init__', 10, 0, True), ('__init__', 11, 0, False), ('__init__', 11, 0, False, (6,)), ('__init__', 11, 0, True), ('__init__', 12, 0, False), ('__init__', 12, 0, True), ('__init__', 13, 0, False, (2, 3, 4, 5, 12), 'mutable'), ('__init__', 19, 0, False, (10, 11, 12, 13, 14, 17, 18), 'mutable'), ('__init__', 19, 0, False, (3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14), 'mutable'), ('__init__', 2, 0, False), ('__init__', 2, 0, False, (), 'mutable'), ('__init__', 2, 0, True), ('__init__', 26, 0, False, (18, 21, 22)), ('__init__', 3, 0, False), ('__init__', 3, 0, False, (0, 2), 'mutable'), ('__init__', 3, 0, True), ('__init__', 4, 0, False), ('__init__', 4, 0, False, (), 'mutable'), ('__init__', 4, 0, True), ('__init__', 5, 0, False), ('__init__', 5, 0, False, (), 'mutable'), ('__init__', 5, 0, False, (4,), 'mutable'), ('__init__', 5, 0, True), ('__init__', 6, 0, False), ('__init__', 6, 0, False, (4,)), ('__init__', 6, 0, True), ('__init__', 7, 0, False), ('__init__', 7, 0, False, (), 'mutable'), ('__init__', 7, 0, False, (4, 6)), ('__init__', 7, 0, True), ('__init__', 8, 0, False), ('__init__', 8, 0, True), ('__init__', 9, 0, False), ('__init__', 9, 0, True)]

def make0(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return ()==()
  return NotImplemented
 return __eq__
def make1(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,)==(other._batched_field_0_,)
  return NotImplemented
 return __eq__
def make2(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,)
  return NotImplemented
 return __eq__
def make3(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,other._batched_field_10_,)
  return NotImplemented
 return __eq__
def make4(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,self._batched_field_11_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,other._batched_field_10_,other._batched_field_11_,)
  return NotImplemented
 return __eq__
def make5(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,self._batched_field_11_,self._batched_field_12_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,other._batched_field_10_,other._batched_field_11_,other._batched_field_12_,)
  return NotImplemented
 return __eq__
def make6(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,self._batched_field_11_,self._batched_field_12_,self._batched_field_13_,self._batched_field_14_,self._batched_field_15_,self._batched_field_16_,self._batched_field_17_,self._batched_field_18_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,other._batched_field_10_,other._batched_field_11_,other._batched_field_12_,other._batched_field_13_,other._batched_field_14_,other._batched_field_15_,other._batched_field_16_,other._batched_field_17_,other._batched_field_18_,)
  return NotImplemented
 return __eq__
def make7(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,)==(other._batched_field_0_,other._batched_field_1_,)
  return NotImplemented
 return __eq__
def make8(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,self._batched_field_11_,self._batched_field_12_,self._batched_field_13_,self._batched_field_14_,self._batched_field_15_,self._batched_field_16_,self._batched_field_17_,self._batched_field_18_,self._batched_field_19_,self._batched_field_20_,self._batched_field_21_,self._batched_field_22_,self._batched_field_23_,self._batched_field_24_,self._batched_field_25_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,other._batched_field_9_,other._batched_field_10_,other._batched_field_11_,other._batched_field_12_,other._batched_field_13_,other._batched_field_14_,other._batched_field_15_,other._batched_field_16_,other._batched_field_17_,other._batched_field_18_,other._batched_field_19_,other._batched_field_20_,other._batched_field_21_,other._batched_field_22_,other._batched_field_23_,other._batched_field_24_,other._batched_field_25_,)
  return NotImplemented
 return __eq__
def make9(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,)
  return NotImplemented
 return __eq__
def make10(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,)
  return NotImplemented
 return __eq__
def make11(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,)
  return NotImplemented
 return __eq__
def make12(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,)
  return NotImplemented
 return __eq__
def make13(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,)
  return NotImplemented
 return __eq__
def make14(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,)
  return NotImplemented
 return __eq__
def make15(_setattr):
 def __eq__(self, other):
  if other.__class__ is self.__class__:
   return (self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,)==(other._batched_field_0_,other._batched_field_1_,other._batched_field_2_,other._batched_field_3_,other._batched_field_4_,other._batched_field_5_,other._batched_field_6_,other._batched_field_7_,other._batched_field_8_,)
  return NotImplemented
 return __eq__
def make16(_setattr):
 def __hash__(self):
  return hash(())
 return __hash__
def make17(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,))
 return __hash__
def make18(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,))
 return __hash__
def make19(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,))
 return __hash__
def make20(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,self._batched_field_9_,self._batched_field_10_,self._batched_field_11_,))
 return __hash__
def make21(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,))
 return __hash__
def make22(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,))
 return __hash__
def make23(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,))
 return __hash__
def make24(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,))
 return __hash__
def make25(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,))
 return __hash__
def make26(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,))
 return __hash__
def make27(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,))
 return __hash__
def make28(_setattr):
 def __hash__(self):
  return hash((self._batched_field_0_,self._batched_field_1_,self._batched_field_2_,self._batched_field_3_,self._batched_field_4_,self._batched_field_5_,self._batched_field_6_,self._batched_field_7_,self._batched_field_8_,))
 return __hash__
def make29(_setattr):
 def __init__(self):
  pass
 return __init__
def make30(_setattr):
 def __init__(self):
  self.__post_init__()
  pass
 return __init__
def make31(_setattr):
 def __init__(self, *, _batched_field_0_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  pass
 return __init__
def make32(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  pass
 return __init__
def make33(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  pass
 return __init__
def make34(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  _setattr(self, '_batched_field_11_', _batched_field_11_)
  pass
 return __init__
def make35(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  pass
 return __init__
def make36(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  pass
 return __init__
def make37(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  pass
 return __init__
def make38(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  pass
 return __init__
def make39(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  pass
 return __init__
def make40(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  pass
 return __init__
def make41(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  pass
 return __init__
def make42(_setattr):
 def __init__(self, *, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  pass
 return __init__
def make43(_setattr):
 def __init__(self, _batched_field_0_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  pass
 return __init__
def make44(_setattr):
 def __init__(self, _batched_field_0_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  self.__post_init__()
  pass
 return __init__
def make45(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  pass
 return __init__
def make46(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  self.__post_init__()
  pass
 return __init__
def make47(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  pass
 return __init__
def make48(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_6=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _factory_6() if _batched_field_6_ is _HAS_DEFAULT_FACTORY else _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  pass
 return __init__
def make49(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  self.__post_init__()
  pass
 return __init__
def make50(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  _setattr(self, '_batched_field_11_', _batched_field_11_)
  pass
 return __init__
def make51(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  _setattr(self, '_batched_field_11_', _batched_field_11_)
  self.__post_init__()
  pass
 return __init__
def make52(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_2=None, _factory_3=None, _factory_4=None, _factory_5=None, _factory_12=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_, _batched_field_12_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _factory_2() if _batched_field_2_ is _HAS_DEFAULT_FACTORY else _batched_field_2_
  self._batched_field_3_ = _factory_3() if _batched_field_3_ is _HAS_DEFAULT_FACTORY else _batched_field_3_
  self._batched_field_4_ = _factory_4() if _batched_field_4_ is _HAS_DEFAULT_FACTORY else _batched_field_4_
  self._batched_field_5_ = _factory_5() if _batched_field_5_ is _HAS_DEFAULT_FACTORY else _batched_field_5_
  self._batched_field_6_ = _batched_field_6_
  self._batched_field_7_ = _batched_field_7_
  self._batched_field_8_ = _batched_field_8_
  self._batched_field_9_ = _batched_field_9_
  self._batched_field_10_ = _batched_field_10_
  self._batched_field_11_ = _batched_field_11_
  self._batched_field_12_ = _factory_12() if _batched_field_12_ is _HAS_DEFAULT_FACTORY else _batched_field_12_
  pass
 return __init__
def make53(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_10=None, _factory_11=None, _factory_12=None, _factory_13=None, _factory_14=None, _factory_17=None, _factory_18=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_, _batched_field_12_, _batched_field_13_, _batched_field_14_, _batched_field_15_, _batched_field_16_, _batched_field_17_, _batched_field_18_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _batched_field_2_
  self._batched_field_3_ = _batched_field_3_
  self._batched_field_4_ = _batched_field_4_
  self._batched_field_5_ = _batched_field_5_
  self._batched_field_6_ = _batched_field_6_
  self._batched_field_7_ = _batched_field_7_
  self._batched_field_8_ = _batched_field_8_
  self._batched_field_9_ = _batched_field_9_
  self._batched_field_10_ = _factory_10() if _batched_field_10_ is _HAS_DEFAULT_FACTORY else _batched_field_10_
  self._batched_field_11_ = _factory_11() if _batched_field_11_ is _HAS_DEFAULT_FACTORY else _batched_field_11_
  self._batched_field_12_ = _factory_12() if _batched_field_12_ is _HAS_DEFAULT_FACTORY else _batched_field_12_
  self._batched_field_13_ = _factory_13() if _batched_field_13_ is _HAS_DEFAULT_FACTORY else _batched_field_13_
  self._batched_field_14_ = _factory_14() if _batched_field_14_ is _HAS_DEFAULT_FACTORY else _batched_field_14_
  self._batched_field_15_ = _batched_field_15_
  self._batched_field_16_ = _batched_field_16_
  self._batched_field_17_ = _factory_17() if _batched_field_17_ is _HAS_DEFAULT_FACTORY else _batched_field_17_
  self._batched_field_18_ = _factory_18() if _batched_field_18_ is _HAS_DEFAULT_FACTORY else _batched_field_18_
  pass
 return __init__
def make54(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_3=None, _factory_4=None, _factory_5=None, _factory_6=None, _factory_7=None, _factory_8=None, _factory_9=None, _factory_10=None, _factory_12=None, _factory_13=None, _factory_14=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_, _batched_field_12_, _batched_field_13_, _batched_field_14_, _batched_field_15_, _batched_field_16_, _batched_field_17_, _batched_field_18_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _batched_field_2_
  self._batched_field_3_ = _factory_3() if _batched_field_3_ is _HAS_DEFAULT_FACTORY else _batched_field_3_
  self._batched_field_4_ = _factory_4() if _batched_field_4_ is _HAS_DEFAULT_FACTORY else _batched_field_4_
  self._batched_field_5_ = _factory_5() if _batched_field_5_ is _HAS_DEFAULT_FACTORY else _batched_field_5_
  self._batched_field_6_ = _factory_6() if _batched_field_6_ is _HAS_DEFAULT_FACTORY else _batched_field_6_
  self._batched_field_7_ = _factory_7() if _batched_field_7_ is _HAS_DEFAULT_FACTORY else _batched_field_7_
  self._batched_field_8_ = _factory_8() if _batched_field_8_ is _HAS_DEFAULT_FACTORY else _batched_field_8_
  self._batched_field_9_ = _factory_9() if _batched_field_9_ is _HAS_DEFAULT_FACTORY else _batched_field_9_
  self._batched_field_10_ = _factory_10() if _batched_field_10_ is _HAS_DEFAULT_FACTORY else _batched_field_10_
  self._batched_field_11_ = _batched_field_11_
  self._batched_field_12_ = _factory_12() if _batched_field_12_ is _HAS_DEFAULT_FACTORY else _batched_field_12_
  self._batched_field_13_ = _factory_13() if _batched_field_13_ is _HAS_DEFAULT_FACTORY else _batched_field_13_
  self._batched_field_14_ = _factory_14() if _batched_field_14_ is _HAS_DEFAULT_FACTORY else _batched_field_14_
  self._batched_field_15_ = _batched_field_15_
  self._batched_field_16_ = _batched_field_16_
  self._batched_field_17_ = _batched_field_17_
  self._batched_field_18_ = _batched_field_18_
  pass
 return __init__
def make55(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  pass
 return __init__
def make56(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  pass
 return __init__
def make57(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  self.__post_init__()
  pass
 return __init__
def make58(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_18=None, _factory_21=None, _factory_22=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_, _batched_field_9_, _batched_field_10_, _batched_field_11_, _batched_field_12_, _batched_field_13_, _batched_field_14_, _batched_field_15_, _batched_field_16_, _batched_field_17_, _batched_field_18_, _batched_field_19_, _batched_field_20_, _batched_field_21_, _batched_field_22_, _batched_field_23_, _batched_field_24_, _batched_field_25_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  _setattr(self, '_batched_field_9_', _batched_field_9_)
  _setattr(self, '_batched_field_10_', _batched_field_10_)
  _setattr(self, '_batched_field_11_', _batched_field_11_)
  _setattr(self, '_batched_field_12_', _batched_field_12_)
  _setattr(self, '_batched_field_13_', _batched_field_13_)
  _setattr(self, '_batched_field_14_', _batched_field_14_)
  _setattr(self, '_batched_field_15_', _batched_field_15_)
  _setattr(self, '_batched_field_16_', _batched_field_16_)
  _setattr(self, '_batched_field_17_', _batched_field_17_)
  _setattr(self, '_batched_field_18_', _factory_18() if _batched_field_18_ is _HAS_DEFAULT_FACTORY else _batched_field_18_)
  _setattr(self, '_batched_field_19_', _batched_field_19_)
  _setattr(self, '_batched_field_20_', _batched_field_20_)
  _setattr(self, '_batched_field_21_', _factory_21() if _batched_field_21_ is _HAS_DEFAULT_FACTORY else _batched_field_21_)
  _setattr(self, '_batched_field_22_', _factory_22() if _batched_field_22_ is _HAS_DEFAULT_FACTORY else _batched_field_22_)
  _setattr(self, '_batched_field_23_', _batched_field_23_)
  _setattr(self, '_batched_field_24_', _batched_field_24_)
  _setattr(self, '_batched_field_25_', _batched_field_25_)
  pass
 return __init__
def make59(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  pass
 return __init__
def make60(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_0=None, _factory_2=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_):
  self._batched_field_0_ = _factory_0() if _batched_field_0_ is _HAS_DEFAULT_FACTORY else _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _factory_2() if _batched_field_2_ is _HAS_DEFAULT_FACTORY else _batched_field_2_
  pass
 return __init__
def make61(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  self.__post_init__()
  pass
 return __init__
def make62(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  pass
 return __init__
def make63(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _batched_field_2_
  self._batched_field_3_ = _batched_field_3_
  pass
 return __init__
def make64(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  self.__post_init__()
  pass
 return __init__
def make65(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  pass
 return __init__
def make66(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _batched_field_2_
  self._batched_field_3_ = _batched_field_3_
  self._batched_field_4_ = _batched_field_4_
  pass
 return __init__
def make67(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_4=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _batched_field_2_
  self._batched_field_3_ = _batched_field_3_
  self._batched_field_4_ = _factory_4() if _batched_field_4_ is _HAS_DEFAULT_FACTORY else _batched_field_4_
  pass
 return __init__
def make68(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  self.__post_init__()
  pass
 return __init__
def make69(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  pass
 return __init__
def make70(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_4=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _factory_4() if _batched_field_4_ is _HAS_DEFAULT_FACTORY else _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  pass
 return __init__
def make71(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  self.__post_init__()
  pass
 return __init__
def make72(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  pass
 return __init__
def make73(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  self._batched_field_0_ = _batched_field_0_
  self._batched_field_1_ = _batched_field_1_
  self._batched_field_2_ = _batched_field_2_
  self._batched_field_3_ = _batched_field_3_
  self._batched_field_4_ = _batched_field_4_
  self._batched_field_5_ = _batched_field_5_
  self._batched_field_6_ = _batched_field_6_
  pass
 return __init__
def make74(_setattr, _HAS_DEFAULT_FACTORY=None, _factory_4=None, _factory_6=None):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _factory_4() if _batched_field_4_ is _HAS_DEFAULT_FACTORY else _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _factory_6() if _batched_field_6_ is _HAS_DEFAULT_FACTORY else _batched_field_6_)
  pass
 return __init__
def make75(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  self.__post_init__()
  pass
 return __init__
def make76(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  pass
 return __init__
def make77(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  self.__post_init__()
  pass
 return __init__
def make78(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  pass
 return __init__
def make79(_setattr):
 def __init__(self, _batched_field_0_, _batched_field_1_, _batched_field_2_, _batched_field_3_, _batched_field_4_, _batched_field_5_, _batched_field_6_, _batched_field_7_, _batched_field_8_):
  _setattr(self, '_batched_field_0_', _batched_field_0_)
  _setattr(self, '_batched_field_1_', _batched_field_1_)
  _setattr(self, '_batched_field_2_', _batched_field_2_)
  _setattr(self, '_batched_field_3_', _batched_field_3_)
  _setattr(self, '_batched_field_4_', _batched_field_4_)
  _setattr(self, '_batched_field_5_', _batched_field_5_)
  _setattr(self, '_batched_field_6_', _batched_field_6_)
  _setattr(self, '_batched_field_7_', _batched_field_7_)
  _setattr(self, '_batched_field_8_', _batched_field_8_)
  self.__post_init__()
  pass
 return __init__
